package auth_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/auth/authtest"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

// TestSessionsAcrossReplicas runs the behaviour every SessionStore
// must show (authtest, also run on MemorySessions), with the session made
// through one pool and read, flashed and deleted through another.
func TestSessionsAcrossReplicas(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	a, err := auth.OpenPGSessions(context.Background(), dbtest.Open(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	b, err := auth.OpenPGSessions(context.Background(), dbtest.Open(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	authtest.SessionStore(t, a, b)
}

// TestSessionsSignOutReachesReplicas: a Delete through one replica calls
// the OnDelete hooks of another; the table never holds the session id.
func TestSessionsSignOutReachesReplicas(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	dbA := dbtest.Open(t, dsn)
	a, err := auth.OpenPGSessions(context.Background(), dbA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := auth.OpenPGSessions(context.Background(), dbtest.Open(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	var hooks atomic.Int64
	b.OnDelete(func() { hooks.Add(1) })
	// The resync after LISTEN calls the hooks once: wait for it, so the
	// count below is the notification's.
	pgtest.WaitFor(t, 5*time.Second, "resync hook after LISTEN", func() bool { return hooks.Load() >= 1 })
	ctx := context.Background()
	id, _, err := a.Create(ctx, auth.Principal{TokenID: "admin", Role: auth.RoleAdmin}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := dbA.Pool().QueryRow(ctx, "SELECT count(*) FROM auth_sessions WHERE position($1 in encode(id_hash, 'hex') || principal::text || csrf) > 0", id).Scan(&n); err != nil || n != 0 {
		t.Errorf("rows holding the session id: %d (%v), want 0", n, err)
	}
	before := hooks.Load()
	if err := a.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, time.Second, "OnDelete on the other replica", func() bool { return hooks.Load() > before })
}
