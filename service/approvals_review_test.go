package service_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/asks"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/pg"
)

// TestDecideKeepsTheChannelCheckWhenTheLookupFails: an approver whose token
// is limited to channel "mine" must never answer an ask of channel "ops".
// Decide checks the channel on the approval Get returns, but went on to
// answer when Get failed: in shared mode Get of an ask this replica has not
// mirrored yet goes to the database, and when that lookup fails (a busy
// pool, a blip) while the manager's own lookup a moment later succeeds,
// the answer was stored with no channel check at all. Want: the lookup's
// error, and nothing stored.
func TestDecideKeepsTheChannelCheckWhenTheLookupFails(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	open := func(o pg.Options) (*pg.DB, *approval.Manager) {
		o.Logger = quiet
		db, err := pg.Open(ctx, dsn, o)
		if err != nil {
			t.Fatal(err)
		}
		shared, err := asks.OpenApprovals(ctx, db)
		if err != nil {
			db.Close()
			t.Fatal(err)
		}
		m := approval.New(approval.Options{Shared: shared, Logger: quiet, SweepInterval: time.Hour})
		t.Cleanup(func() { m.Shutdown(); db.Close() })
		return db, m
	}
	_, mgrA := open(pg.Options{})
	dbB, mgrB := open(pg.Options{MaxConns: 1, OpTimeout: time.Second})

	// Replica B's only connection is busy: its first lookup of the new
	// ask times out; it is free again before the manager looks again.
	conn, err := dbB.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	time.AfterFunc(1500*time.Millisecond, func() { conn.Release(); close(released) })
	defer func() { <-released }()

	req := engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make deploy"}), ChannelID: "ops"}
	a, _, err := mgrA.Create(ctx, req, engine.Decision{Level: policy.Ask, Reason: "deploys ask"}, "s1")
	if err != nil {
		t.Fatal(err)
	}
	approver := auth.Principal{TokenID: "tok_x", Name: "mine-approver", Role: auth.RoleApprover, Channels: []string{"mine"}}
	got, err := service.NewApprovals(mgrB).Decide(ctx, approver, a.ID, approval.ChoiceAllowOnce, "")
	if err == nil || !got.Pending() && got.DecidedBy == approver.Name {
		t.Errorf("Decide by an approver of channel mine on an ask of channel ops = %+v, %v; want an error and nothing stored", got, err)
	}
}
