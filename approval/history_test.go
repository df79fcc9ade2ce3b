package approval_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
)

// memHistory keeps records in memory; block, when set, stalls every write.
type memHistory struct {
	mu      sync.Mutex
	records []approval.Approval
	pending []approval.Approval
	block   chan struct{}
}

func (h *memHistory) RecordApproval(_ context.Context, a approval.Approval) error {
	if h.block != nil {
		<-h.block
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, a)
	return nil
}

func (h *memHistory) PendingApprovals(context.Context) ([]approval.Approval, error) {
	return h.pending, nil
}

func (h *memHistory) statuses() []approval.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []approval.Status
	for _, r := range h.records {
		out = append(out, r.Status)
	}
	return out
}

func TestHistoryRecordsEveryChange(t *testing.T) {
	h := &memHistory{}
	m := approval.New(approval.Options{History: h})
	a := mustCreate(t, m, bashReq("make"), "s1")
	if _, err := m.Decide(context.Background(), a.ID, approval.ChoiceAllowOnce, "alice", ""); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, m, bashReq("ls"), "s1")
	m.Shutdown() // flushes
	got := h.statuses()
	want := []approval.Status{approval.StatusPending, approval.StatusAllowed, approval.StatusPending, approval.StatusCancelled}
	if len(got) != len(want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: got %q, want %q", i, got[i], want[i])
		}
	}
}

func TestStalledHistoryNeverBlocks(t *testing.T) {
	h := &memHistory{block: make(chan struct{})}
	m := approval.New(approval.Options{History: h, HistoryBuffer: 4})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			mustCreate(t, m, bashReq("make"), "")
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Create blocked on a stalled history")
	}
	if got := m.Stats().HistoryDropped; got < 40 {
		t.Errorf("HistoryDropped: got %d, want at least 40 of 50 with a buffer of 4", got)
	}
	close(h.block)
	m.Shutdown()
}

func TestRecoverHistoryCancelsStale(t *testing.T) {
	stale := approval.Approval{ID: "old", Status: approval.StatusPending, Request: approval.Request{ToolName: "bash"}}
	h := &memHistory{pending: []approval.Approval{stale}}
	m := approval.New(approval.Options{History: h})
	defer m.Shutdown()
	n, err := m.RecoverHistory(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("RecoverHistory: got %d %v, want 1", n, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.records) != 1 || h.records[0].ID != "old" || h.records[0].Status != approval.StatusCancelled || h.records[0].Decision != "deny" {
		t.Errorf("recovered record: got %+v", h.records)
	}
}
