package history

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

// TestHistoryReplicasRecordOnce: replicas recording the same creation and
// the same answer at once (each on its own pool) leave one row and exactly
// one event per change, and a late, different answer changes nothing.
func TestHistoryReplicasRecordOnce(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	const replicas = 4
	hs := make([]*PGStore, replicas)
	for i := range hs {
		h, err := OpenPG(context.Background(), dbtest.Open(t, dsn))
		if err != nil {
			t.Fatal(err)
		}
		hs[i] = h
	}
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 10, 0, 0, 1, time.UTC)
	a := askAt("r1", base, "s1")
	won := answered(a, approval.StatusAllowed, approval.ChoiceAllowOnce, "alice", "", base.Add(time.Minute))
	lost := answered(a, approval.StatusDenied, approval.ChoiceDeny, "bob", "", base.Add(2*time.Minute))
	for _, step := range []approval.Approval{a, won} {
		var wg sync.WaitGroup
		for _, h := range hs {
			for range 3 {
				wg.Go(func() {
					if err := h.RecordApproval(ctx, step); err != nil {
						t.Errorf("record %s: %v", step.Status, err)
					}
				})
			}
		}
		wg.Wait()
	}
	if err := hs[1].RecordApproval(ctx, lost); err != nil {
		t.Fatal(err)
	}
	events, err := hs[2].ApprovalEvents(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	var got []approval.Status
	for _, e := range events {
		got = append(got, e.Status)
	}
	if want := []approval.Status{approval.StatusPending, approval.StatusAllowed}; !slices.Equal(got, want) {
		t.Errorf("events: got %v, want %v", got, want)
	}
	if g, _ := hs[3].GetApproval(ctx, "r1"); g.DecidedBy != "alice" || g.Status != approval.StatusAllowed {
		t.Errorf("stored: %s by %s, want allowed by alice", g.Status, g.DecidedBy)
	}
}

// TestHistoryBadText: a NUL byte or invalid UTF-8 in the ask's fields does
// not make the record fail.
func TestHistoryBadText(t *testing.T) {
	h, err := OpenPG(context.Background(), dbtest.Open(t, pgtest.NewDSN(t)))
	if err != nil {
		t.Fatal(err)
	}
	a := askAt("n1", time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), "s\x00\xff")
	a.Request.ToolArgs["command"] = "rm\x00 -rf /"
	a.Comment = "x\x00"
	if err := h.RecordApproval(context.Background(), a); err != nil {
		t.Fatalf("record: %v", err)
	}
	got, err := h.GetApproval(context.Background(), "n1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Request.SessionID != "s\uFFFD\uFFFD" || got.Request.ToolArgs["command"] != "rm\x00 -rf /" {
		t.Errorf("stored session %q command %q; want U+FFFD for the session's bad bytes and the JSON-escaped NUL kept", got.Request.SessionID, got.Request.ToolArgs["command"])
	}
}

// TestHistoryServerAway: with the server stopped every method fails with
// store.ErrUnavailable (the approval manager counts a failed record), and
// works again once it is back.
func TestHistoryServerAway(t *testing.T) {
	c := pgtest.Start(t)
	db, err := pg.Open(context.Background(), c.NewDatabase(t), pg.Options{OpTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := OpenPG(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := askAt("w1", time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), "s1")
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := h.RecordApproval(ctx, a); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("record: err %v, want pg.ErrUnavailable", err)
	}
	if _, err := h.ListApprovals(ctx, Query{}); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("list: err %v, want pg.ErrUnavailable", err)
	}
	if _, err := h.GetApproval(ctx, "w1"); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("get: err %v, want pg.ErrUnavailable", err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var recErr error
	pgtest.WaitFor(t, 10*time.Second, "record after the server is back", func() bool {
		recErr = h.RecordApproval(ctx, a)
		return recErr == nil
	})
	if got, err := h.GetApproval(ctx, "w1"); err != nil || got.ID != "w1" {
		t.Errorf("get after the server is back: %+v, %v", got, err)
	}
}
