package auth

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

// TestRevokedTokenEndsAfterAFailedReload: a replica whose reload after the
// revocation's notification fails (here: its pool is busy, so the reload
// times out; in production a busy pool, a statement cancelled, a blip on
// the pool's connections while the listening one stays up) must not go on
// accepting the revoked token until some unrelated token change or
// reconnect: the notification names the token, and a failed reload must be
// retried.
func TestRevokedTokenEndsAfterAFailedReload(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	a, _ := openPGTokens(t, dbtest.Open(t, dsn), t.TempDir())
	dbB, err := pg.Open(context.Background(), dsn, pg.Options{MaxConns: 1, OpTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dbB.Close)
	b, _ := openPGTokens(t, dbB, t.TempDir())

	info, secret, err := a.Create("ci", RoleAgent, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 2*time.Second, "token verifies on replica B", func() bool { _, ok := b.Verify(secret); return ok })

	// Replica B's only pool connection is busy while the revocation's
	// notification arrives: its reload cannot run.
	conn, err := dbB.Pool().Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Revoke(info.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the reload has timed out by now
	conn.Release()

	deadline := time.Now().Add(3 * time.Second)
	for {
		_, ok := b.Verify(secret)
		if !ok && !b.Active(info.ID) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica B still accepts the revoked token %s 3 s after its pool is free again (Verify ok=%v, Active=%v); want refused", info.ID, ok, b.Active(info.ID))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
