package history

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

// insertHistoryVersion1 writes a row as a replica of the history's schema
// version 1 did, with no cause column.
func insertHistoryVersion1(t *testing.T, db *pg.DB, id string, status approval.Status, created time.Time, decided *int64) {
	t.Helper()
	_, err := db.Pool().Exec(context.Background(), `INSERT INTO approval_history (id, status, created_at, expires_at, decided_at,
		tool_name, tool_args, channel_id, session_id, workspace, matched_rule, reason, external_paths,
		choice, decided_by, comment, decision, persisted_rule, joins)
		VALUES ($1, $2, $3, $4, $5, 'bash', '{"command":"make"}', 'web', 's1', '/w', 'tools.bash', 'ask', '["/etc"]',
		'', '', '', '', '', 0)`, id, string(status), created.UnixNano(), created.Add(5*time.Minute).UnixNano(), decided)
	if err != nil {
		t.Fatalf("insert version 1 row %s: %v", id, err)
	}
}

// TestPGHistoryMigratesCause: a database whose history a replica of schema
// version 1 made (here by version 1's own step, as that replica ran it)
// migrates when a current replica opens it; its old rows read back whole
// with an empty cause, and an old pending ask answered now gets the cause
// it is answered with.
func TestPGHistoryMigratesCause(t *testing.T) {
	db := dbtest.Open(t, pgtest.NewDSN(t))
	ctx := context.Background()
	if err := pg.Migrate(ctx, db, pg.PartHistory, pg.Steps(pg.PartHistory)[:1]); err != nil {
		t.Fatalf("version 1: %v", err)
	}
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	decided := t0.Add(time.Minute).UnixNano()
	insertHistoryVersion1(t, db, "old-answered", approval.StatusDenied, t0, &decided)
	insertHistoryVersion1(t, db, "old-pending", approval.StatusPending, t0.Add(time.Second), nil)

	h, err := OpenPG(ctx, db)
	if err != nil {
		t.Fatalf("open a version 1 history: %v", err)
	}
	var v int
	if err := db.Pool().QueryRow(ctx, `SELECT max(version) FROM schema_migrations WHERE part = $1`, pg.PartHistory).Scan(&v); err != nil || v != len(pg.Steps(pg.PartHistory)) {
		t.Fatalf("schema version: got %d (err %v), want %d", v, err, len(pg.Steps(pg.PartHistory)))
	}
	got, err := h.GetApproval(ctx, "old-answered")
	if err != nil || got.Status != approval.StatusDenied || got.Asked.Cause != "" ||
		got.Asked.MatchedRule != "tools.bash" || got.Request.ToolArgs["command"] != "make" || len(got.Asked.ExternalPaths) != 1 {
		t.Errorf("old answered row: got %+v (err %v), want it whole with an empty cause", got, err)
	}
	pending, err := h.PendingApprovals(ctx)
	if err != nil || len(pending) != 1 || pending[0].ID != "old-pending" || pending[0].Asked.Cause != "" {
		t.Fatalf("old pending rows: got %+v (err %v), want old-pending with an empty cause", pending, err)
	}
	answer := answered(pending[0], approval.StatusAllowed, approval.ChoiceAllowOnce, "alice", "", t0.Add(time.Hour))
	answer.Asked.Cause = engine.CauseEscalation
	if err := h.RecordApproval(ctx, answer); err != nil {
		t.Fatal(err)
	}
	if got, err := h.GetApproval(ctx, "old-pending"); err != nil || got.Status != approval.StatusAllowed || got.Asked.Cause != engine.CauseEscalation {
		t.Errorf("old pending row answered: got %s with cause %q (err %v), want allowed with %q", got.Status, got.Asked.Cause, err, engine.CauseEscalation)
	}
}
