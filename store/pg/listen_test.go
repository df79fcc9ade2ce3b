package pg

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestListenerReconnectResyncs: when the listening connection is killed
// (pg_terminate_backend), the Listener reconnects, calls resync, and
// delivers later notifications again.
func TestListenerReconnectResyncs(t *testing.T) {
	dsn := newDSN(t)
	db, other := openDB(t, dsn), openDB(t, dsn)
	l := db.Listener()
	var resyncs atomic.Int64
	var mu sync.Mutex
	var got []string
	l.Subscribe("toolgate_test", func(p string) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	}, func() { resyncs.Add(1) })
	waitFor(t, 5*time.Second, "first LISTEN", func() bool { return resyncs.Load() == 1 && l.Connected() })
	ctx := context.Background()
	notify := func(payload string) {
		t.Helper()
		if _, err := other.pool.Exec(ctx, "SELECT pg_notify('toolgate_test', $1)", payload); err != nil {
			t.Fatal(err)
		}
	}
	received := func(p string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, g := range got {
				if g == p {
					return true
				}
			}
			return false
		}
	}
	notify("one")
	waitFor(t, time.Second, "notification one", received("one"))

	pid := l.pid.Load()
	var killed bool
	if err := other.pool.QueryRow(ctx, "SELECT pg_terminate_backend($1)", int32(pid)).Scan(&killed); err != nil || !killed {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, killed, err)
	}
	waitFor(t, 5*time.Second, "resync after reconnect", func() bool { return resyncs.Load() >= 2 })
	if l.pid.Load() == pid {
		t.Errorf("listener still reports the killed backend %d", pid)
	}
	notify("two")
	waitFor(t, time.Second, "notification two after reconnect", received("two"))
}

// TestListenerSubscribeWhileConnected: a channel subscribed after the
// Listener is up is LISTENed on the fly and resynced once.
func TestListenerSubscribeWhileConnected(t *testing.T) {
	dsn := newDSN(t)
	db, other := openDB(t, dsn), openDB(t, dsn)
	l := db.Listener()
	var firstResync atomic.Int64
	l.Subscribe("toolgate_a", func(string) {}, func() { firstResync.Add(1) })
	waitFor(t, 5*time.Second, "first channel", func() bool { return firstResync.Load() == 1 })

	var resyncs, calls atomic.Int64
	unsubscribe := l.Subscribe("toolgate_b", func(string) { calls.Add(1) }, func() { resyncs.Add(1) })
	waitFor(t, 5*time.Second, "second channel resync", func() bool { return resyncs.Load() == 1 })
	if _, err := other.pool.Exec(context.Background(), "NOTIFY toolgate_b, 'x'"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Second, "notification on the new channel", func() bool { return calls.Load() == 1 })
	if n := firstResync.Load(); n != 1 {
		t.Errorf("the first channel was resynced %d times, want 1", n)
	}
	unsubscribe()
	if _, err := other.pool.Exec(context.Background(), "NOTIFY toolgate_b, 'y'"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if n := calls.Load(); n != 1 {
		t.Errorf("after unsubscribe: %d calls, want 1", n)
	}
}
