package grants

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/grant/granttest"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

func openPG(t *testing.T, db *pg.DB) *PGStore {
	t.Helper()
	st, err := OpenPG(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestGrantsConformance holds the grants table to every grant.Store's
// behaviour.
func TestGrantsConformance(t *testing.T) {
	granttest.Conformance(t, func(t *testing.T) grant.Store { return openPG(t, dbtest.Open(t, pgtest.NewDSN(t))) })
}

// TestGrantsBook: a Book over the table decides with what it adds and
// stops with what it revokes.
func TestGrantsBook(t *testing.T) {
	granttest.BookFollowsItsStore(t, openPG(t, dbtest.Open(t, pgtest.NewDSN(t))))
}

// startReplicas starts n replicas on dsn (a connection and a Book each)
// on clock, whose periodic reload is an hour away: what they learn in a
// test they learn by notice, resync or their own writes.
func startReplicas(t *testing.T, ctx context.Context, dsn string, n int, clock *granttest.Clock) ([]*grant.Book, []*pg.DB) {
	t.Helper()
	books, dbs := make([]*grant.Book, n), make([]*pg.DB, n)
	for i := range books {
		dbs[i] = dbtest.Open(t, dsn)
		books[i] = grant.NewBook(openPG(t, dbs[i]), grant.Options{Reload: time.Hour, Now: clock.Now})
		if err := books[i].Start(ctx); err != nil {
			t.Fatal(err)
		}
		pgtest.WaitFor(t, 5*time.Second, "the listener connects", dbs[i].Listener().Connected)
	}
	return books, dbs
}

// TestGrantsAcrossReplicas: two replicas (two connections, two Books). A
// grant added through one decides on the other within a second, by the
// notice and not by the periodic reload; it stops on both at its expiry
// by the clock alone; a revoke through the other stops a grant on the
// first just as fast.
func TestGrantsAcrossReplicas(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var clock granttest.Clock
	clock.Set(time.Now())
	books, _ := startReplicas(t, ctx, pgtest.NewDSN(t), 2, &clock)
	base := granttest.Engine(t, "/ws")
	add := func(ttl time.Duration) grant.Grant {
		t.Helper()
		g := granttest.Sample("", clock.Now(), ttl)
		g.Workspace = base.GrantWorkspace(&engine.Request{})
		made, err := books[0].Add(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		return made
	}
	level := func(i int) policy.Level { return granttest.Level(books[i].Engine(base), "npm test", "s1") }
	first := add(time.Minute)
	pgtest.WaitFor(t, time.Second, "replica 2 allows by replica 1's grant", func() bool { return level(1) == policy.Allow })
	clock.Set(first.ExpiresAt)
	for i := range books {
		if lvl := level(i); lvl != policy.Ask {
			t.Errorf("replica %d at the grant's expiry: %s, want ask", i+1, lvl)
		}
	}
	second := add(time.Minute)
	pgtest.WaitFor(t, time.Second, "replica 2 allows by replica 1's second grant", func() bool { return level(1) == policy.Allow })
	if _, err := books[1].Revoke(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, time.Second, "replica 1 stops after replica 2's revoke", func() bool { return level(0) == policy.Ask })
}

// TestGrantsResyncAfterReconnect: a grant whose notice a replica missed
// (written with no notice here, as one sent while its listener was away
// would be) decides there once its listener reconnects, not only at the
// next periodic reload.
func TestGrantsResyncAfterReconnect(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var clock granttest.Clock
	clock.Set(time.Now())
	books, dbs := startReplicas(t, ctx, pgtest.NewDSN(t), 1, &clock)
	base := granttest.Engine(t, "/ws")
	g := granttest.Sample("g_missed", clock.Now(), time.Hour)
	g.Workspace = base.GrantWorkspace(&engine.Request{})
	if _, err := dbs[0].Pool().Exec(ctx, insertPG, pgValues(g)...); err != nil {
		t.Fatal(err)
	}
	if lvl := granttest.Level(books[0].Engine(base), "npm test", "s1"); lvl != policy.Ask {
		t.Fatalf("a grant stored without a notice decides before any reload: %s", lvl)
	}
	l := dbs[0].Listener()
	pid := l.PID()
	var killed bool
	if err := dbs[0].Pool().QueryRow(ctx, "SELECT pg_terminate_backend($1)", int32(pid)).Scan(&killed); err != nil || !killed {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, killed, err)
	}
	pgtest.WaitFor(t, 5*time.Second, "the grant decides after the listener reconnects", func() bool {
		return granttest.Level(books[0].Engine(base), "npm test", "s1") == policy.Allow
	})
	if l.Reconnects() < 1 {
		t.Errorf("allowed with no reconnect: Reconnects = %d", l.Reconnects())
	}
}
