package pg_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/pg"
)

// TestServerGoneAndBack: with the server stopped, reads and writes fail
// with ErrUnavailable; once it runs again, they work without reopening, and
// the Listener resyncs its subscribers.
func TestServerGoneAndBack(t *testing.T) {
	c := pgtest.Start(t)
	dsn := c.NewDatabase(t)
	db, err := pg.Open(context.Background(), dsn, pg.Options{OpTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := store.OpenPGBackend(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	tokens, _, err := auth.OpenPGTokens(context.Background(), db, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, agent, err := tokens.Create("a", auth.RoleAgent, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var resyncs atomic.Int64
	db.Listener().Subscribe(pg.ChannelPolicy, func(string) {}, func() { resyncs.Add(1) })
	pgtest.WaitFor(t, 5*time.Second, "listener up", func() bool { return resyncs.Load() == 1 })
	ctx := context.Background()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Read(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Read with the server stopped: err = %v, want ErrUnavailable", err)
	}
	_, err = p.Update(ctx, func(store.Document) ([]byte, error) { return []byte("permissions: {}\n"), nil })
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Update with the server stopped: err = %v, want ErrUnavailable", err)
	}
	if err := db.Ping(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Ping with the server stopped: err = %v, want ErrUnavailable", err)
	}
	if _, ok := tokens.Verify(agent); !ok {
		t.Error("Verify with the server stopped: a known token no longer verifies")
	}
	if _, _, err := tokens.Create("b", auth.RoleAgent, nil, nil); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Create with the server stopped: err = %v, want ErrUnavailable", err)
	}
	if err := tokens.Revoke("tok_x"); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Revoke with the server stopped: err = %v, want ErrUnavailable", err)
	}
	pgtest.WaitFor(t, 5*time.Second, "listener notices", func() bool { return !db.Listener().Connected() })
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 15*time.Second, "Read after restart", func() bool { _, err := p.Read(ctx); return err == nil })
	if _, err := p.Update(ctx, func(store.Document) ([]byte, error) { return []byte("permissions: {}\n"), nil }); err != nil {
		t.Errorf("Update after restart: %v", err)
	}
	pgtest.WaitFor(t, 15*time.Second, "listener resync after restart", func() bool { return resyncs.Load() >= 2 })
}
