package approval_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
)

// TestSharedResyncRetriesFailedRefresh: B's waiter is on an ask that A
// answers while B's notification connection is gone. When B is back, its
// resync reads the pending list, but reading that one answered ask fails
// (here: its stored request is unreadable for a while). B must try again
// at its next sweeps, so the waiter gets A's answer soon after the ask can
// be read, not one sweep past the ask's deadline a minute later.
func TestSharedResyncRetriesFailedRefresh(t *testing.T) {
	p := openCuttablePair(t, "replica_r")
	a, b, cluster, dsn := p.a, p.b, p.cluster, p.dsn

	asked := mustCreate(t, a.m, bashReq("answered while B is deaf"), "s1")
	visible(t, b, asked.ID)
	waited := make(chan approval.Approval, 1)
	go func() {
		got, _ := b.m.Wait(context.Background(), asked.ID, 50*time.Second)
		waited <- got
	}()

	p.cut(t)
	if _, err := a.m.Decide(context.Background(), asked.ID, approval.ChoiceDeny, "alice", "no"); err != nil {
		t.Fatalf("Decide on A: %v", err)
	}
	// The answered ask's row cannot be read back for now (its request
	// column no longer decodes); the pending list still reads fine.
	cluster.Psql(t, dsn, `UPDATE approval_asks SET request = json_build_object('request', 5, 'kept', request) WHERE id = '`+asked.ID+`'`)
	marker := mustCreate(t, a.m, bashReq("made while B is deaf"), "s1")
	p.letBack(t)

	visible(t, b, marker.ID) // B's resync has run, and its refresh of asked failed
	time.Sleep(300 * time.Millisecond)
	select {
	case got := <-waited:
		t.Fatalf("B's Wait returned %+v while the answered ask could not be read: the test proves nothing", got)
	default:
	}
	cluster.Psql(t, dsn, `UPDATE approval_asks SET request = request->'kept' WHERE id = '`+asked.ID+`'`)
	select {
	case got := <-waited:
		if got.Status != approval.StatusDenied || got.DecidedBy != "alice" {
			t.Errorf("B's Wait: got %s by %q, want alice's deny", got.Status, got.DecidedBy)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("B's Wait did not get A's answer within 10s of the ask being readable again")
	}
}
