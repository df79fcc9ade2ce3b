package asks

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/store/history"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

// TestHistoryKeepsCause: an ask the shell escalation raised, opened and
// answered through the shared asks as a replica does, reads back from the
// history with its cause through every read, so that the approvals page
// names the true cause of a past answer.
func TestHistoryKeepsCause(t *testing.T) {
	db, _ := dbtest.New(t)
	s := openApprovals(t, db)
	h, err := history.OpenPG(context.Background(), db)
	if err != nil {
		t.Fatalf("OpenPG: %v", err)
	}
	ctx := context.Background()
	a := newAsk("k1", time.Minute, map[string]any{"command": "make"})
	a.Asked.Cause = engine.CauseEscalation
	mustInsert(t, s, a, "")
	at := time.Now().Truncate(time.Microsecond)
	if _, err := s.Resolve(ctx, "k1", approval.Outcome{Status: approval.StatusAllowed, Choice: approval.ChoiceAllowOnce, DecidedBy: "alice", DecidedAt: at}, nil); err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	got, err := h.GetApproval(ctx, "k1")
	if err != nil || got.Status != approval.StatusAllowed || got.Asked.Cause != engine.CauseEscalation {
		t.Errorf("get: %s with cause %q (err %v), want allowed with %q", got.Status, got.Asked.Cause, err, engine.CauseEscalation)
	}
	page, err := h.ListApprovals(ctx, history.Query{Status: approval.StatusAllowed})
	if err != nil || len(page.Approvals) != 1 || page.Approvals[0].Asked.Cause != engine.CauseEscalation {
		t.Errorf("list: got %+v (err %v), want k1 with cause %q", page.Approvals, err, engine.CauseEscalation)
	}
}
