package history

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/store/sqlite"
)

// TestHistoryKeepsCause: the step that asked reads back from the history
// once the ask is answered, through every read, so that the approvals page
// names the true cause of a past answer.
func TestHistoryKeepsCause(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		note, id, cause string
	}{
		{note: "the shell escalation asked", id: "c1", cause: engine.CauseEscalation},
		{note: "a path outside the workspace asked", id: "c2", cause: engine.CauseExternal},
		{note: "a rule asked", id: "c3", cause: engine.CauseRule},
		{note: "no cause given stays empty", id: "c4", cause: ""},
	}
	for i, c := range cases {
		a := histApproval(c.id, t0.Add(time.Duration(i)*time.Second))
		a.Asked.Cause = c.cause
		if err := db.RecordApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordApproval(ctx, resolved(a, approval.StatusDenied, approval.ChoiceDeny, "bob", t0.Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	page, err := db.ListApprovals(ctx, Query{})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, a := range page.Approvals {
		listed[a.ID] = a.Asked.Cause
	}
	for _, c := range cases {
		got, err := db.GetApproval(ctx, c.id)
		if err != nil || got.Status != approval.StatusDenied || got.Asked.Cause != c.cause {
			t.Errorf("%s: get gave %s with cause %q (err %v), want denied with %q", c.note, got.Status, got.Asked.Cause, err, c.cause)
		}
		if listed[c.id] != c.cause {
			t.Errorf("%s: list gave cause %q, want %q", c.note, listed[c.id], c.cause)
		}
	}
}

// insertVersion1 writes a row as a binary of schema version 1 did, with no
// cause column.
func insertVersion1(t *testing.T, db *sqlite.DB, id string, status approval.Status, created time.Time, decided any) {
	t.Helper()
	_, err := db.SQL().Exec(`INSERT INTO approvals (id, status, created_at, expires_at, decided_at,
		tool_name, tool_args, channel_id, session_id, workspace, matched_rule, reason, external_paths,
		choice, decided_by, comment, decision, persisted_rule, joins)
		VALUES (?, ?, ?, ?, ?, 'bash', '{"command":"make"}', 'web', 's1', '/w', 'tools.bash', 'ask', '["/etc"]',
		'', '', '', '', '', 0)`, id, string(status), created.UnixNano(), created.Add(5*time.Minute).UnixNano(), decided)
	if err != nil {
		t.Fatalf("insert version 1 row %s: %v", id, err)
	}
}

// TestHistoryMigratesCause: a database written by schema version 1 (made
// here by version 1's own migration, as the binary that shipped it ran it)
// opens at the current version, its old rows read back whole with an empty
// cause, and an old pending ask answered now gets the cause it is answered
// with.
func TestHistoryMigratesCause(t *testing.T) {
	path := filepath.Join(t.TempDir(), "approvals.db")
	old, err := sqlite.Open(path, migrations[:1])
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	insertVersion1(t, old, "old-answered", approval.StatusDenied, t0, t0.Add(time.Minute).UnixNano())
	insertVersion1(t, old, "old-pending", approval.StatusPending, t0.Add(time.Second), nil)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := Open(path)
	if err != nil {
		t.Fatalf("open a version 1 database: %v", err)
	}
	defer db.Close()
	ctx := context.Background()
	if v, err := db.db.SchemaVersion(ctx); err != nil || v != len(migrations) {
		t.Fatalf("schema version: got %d (err %v), want %d", v, err, len(migrations))
	}
	got, err := db.GetApproval(ctx, "old-answered")
	if err != nil || got.Status != approval.StatusDenied || got.Asked.Cause != "" ||
		got.Asked.MatchedRule != "tools.bash" || got.Request.ToolArgs["command"] != "make" || len(got.Asked.ExternalPaths) != 1 {
		t.Errorf("old answered row: got %+v (err %v), want it whole with an empty cause", got, err)
	}
	pending, err := db.PendingApprovals(ctx)
	if err != nil || len(pending) != 1 || pending[0].ID != "old-pending" || pending[0].Asked.Cause != "" {
		t.Fatalf("old pending rows: got %+v (err %v), want old-pending with an empty cause", pending, err)
	}
	answer := resolved(pending[0], approval.StatusAllowed, approval.ChoiceAllowOnce, "alice", t0.Add(time.Hour))
	answer.Asked.Cause = engine.CauseEscalation
	if err := db.RecordApproval(ctx, answer); err != nil {
		t.Fatal(err)
	}
	if got, err := db.GetApproval(ctx, "old-pending"); err != nil || got.Status != approval.StatusAllowed || got.Asked.Cause != engine.CauseEscalation {
		t.Errorf("old pending row answered: got %s with cause %q (err %v), want allowed with %q", got.Status, got.Asked.Cause, err, engine.CauseEscalation)
	}
}
