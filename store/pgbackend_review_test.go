package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

// TestEditReachesAReplicaWhoseReloadFailed: a replica whose reload after an
// edit's notification fails once (its pool busy, a statement cancelled, a
// blip on the pool's connections while the listening one stays up) must
// still come to decide with the edit, and its health must clear, without
// waiting for another edit or a listener reconnect: no second notification
// comes to correct it. Before the fix the replica decides with the old
// policy for good and /readyz (Health) stays failing for good.
func TestEditReachesAReplicaWhoseReloadFailed(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	a := openStore(t, dbtest.Open(t, dsn))
	dbB, err := pg.Open(context.Background(), dsn, pg.Options{MaxConns: 1, OpTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dbB.Close)
	b := openStore(t, dbB)

	conn, err := dbB.Pool().Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateRule(ruleOf(map[string]any{"id": "no_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "deny"})); err != nil {
		t.Fatalf("CreateRule: %v", err)
	}
	time.Sleep(time.Second) // replica B's reload has timed out by now
	conn.Release()

	deadline := time.Now().Add(3 * time.Second)
	for {
		level, health := b.Engine().Evaluate(gitPush).Level, b.Health()
		if level == policy.Deny && health == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("3 s after its pool is free again replica B decides %s (want deny, the edit) and Health = %v (want nil)", level, health)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
