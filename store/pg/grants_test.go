package pg

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/internal/granttest"
)

func openGrants(t *testing.T, db *DB) *Grants {
	t.Helper()
	st, err := OpenGrants(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestGrantsConformance holds the grants table to every grant.Store's
// behaviour.
func TestGrantsConformance(t *testing.T) {
	granttest.Conformance(t, func(t *testing.T) grant.Store { return openGrants(t, openDB(t, newDSN(t))) })
}

// TestGrantsBook: a Book over the table decides with what it adds and
// stops with what it revokes.
func TestGrantsBook(t *testing.T) {
	granttest.BookFollowsItsStore(t, openGrants(t, openDB(t, newDSN(t))))
}

// TestGrantsAcrossReplicas: two replicas (two connections, two Books). A
// grant added through one decides on the other within a second, by the
// notice and not by the periodic reload (set to an hour here); a revoke
// through the other stops it on the first just as fast.
func TestGrantsAcrossReplicas(t *testing.T) {
	dsn := newDSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	books := make([]*grant.Book, 2)
	for i := range books {
		db := openDB(t, dsn)
		books[i] = grant.NewBook(openGrants(t, db), grant.Options{Reload: time.Hour})
		if err := books[i].Start(ctx); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, "the listener connects", db.Listener().Connected)
	}
	base := granttest.Engine(t, "/ws")
	g := granttest.Sample("", time.Now(), time.Hour)
	g.Workspace = base.GrantWorkspace(&engine.Request{})
	made, err := books[0].Add(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Second, "replica 2 allows by replica 1's grant", func() bool {
		return granttest.Level(books[1].Engine(base), "npm test", "s1") == engine.Allow
	})
	if _, err := books[1].Revoke(ctx, made.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Second, "replica 1 stops after replica 2's revoke", func() bool {
		return granttest.Level(books[0].Engine(base), "npm test", "s1") == engine.Ask
	})
}
