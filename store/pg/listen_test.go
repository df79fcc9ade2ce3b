package pg

import (
	"context"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestListenerReconnectResyncs: when the listening connection is killed
// (pg_terminate_backend), the Listener reconnects, calls resync, and
// delivers later notifications again.
func TestListenerReconnectResyncs(t *testing.T) {
	dsn := pgtest.NewDSN(t)
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
	pgtest.WaitFor(t, 5*time.Second, "first LISTEN", func() bool { return resyncs.Load() == 1 && l.Connected() })
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
	pgtest.WaitFor(t, time.Second, "notification one", received("one"))

	pid := l.pid.Load()
	var killed bool
	if err := other.pool.QueryRow(ctx, "SELECT pg_terminate_backend($1)", int32(pid)).Scan(&killed); err != nil || !killed {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, killed, err)
	}
	pgtest.WaitFor(t, 5*time.Second, "resync after reconnect", func() bool { return resyncs.Load() >= 2 })
	if l.Reconnects() < 1 {
		t.Errorf("Reconnects = %d after a lost connection, want at least 1", l.Reconnects())
	}
	if l.pid.Load() == pid {
		t.Errorf("listener still reports the killed backend %d", pid)
	}
	notify("two")
	pgtest.WaitFor(t, time.Second, "notification two after reconnect", received("two"))
}

// TestListenerSubscribeWhileConnected: a channel subscribed after the
// Listener is up is LISTENed on the fly and resynced once.
func TestListenerSubscribeWhileConnected(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	db, other := openDB(t, dsn), openDB(t, dsn)
	l := db.Listener()
	var firstResync atomic.Int64
	l.Subscribe("toolgate_a", func(string) {}, func() { firstResync.Add(1) })
	pgtest.WaitFor(t, 5*time.Second, "first channel", func() bool { return firstResync.Load() == 1 })

	var resyncs, calls atomic.Int64
	unsubscribe := l.Subscribe("toolgate_b", func(string) { calls.Add(1) }, func() { resyncs.Add(1) })
	pgtest.WaitFor(t, 5*time.Second, "second channel resync", func() bool { return resyncs.Load() == 1 })
	if _, err := other.pool.Exec(context.Background(), "NOTIFY toolgate_b, 'x'"); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, time.Second, "notification on the new channel", func() bool { return calls.Load() == 1 })
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

// TestListenerNoticesSilentPartition: when the path to the server goes
// silent (packets dropped, no reset), the Listener finds out by its ping,
// reconnects once the path is back, and resyncs.
func TestListenerNoticesSilentPartition(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	px := startCutProxy(t, dsn)
	db, err := Open(context.Background(), px.dsn, Options{OpTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l := db.Listener()
	l.mu.Lock()
	l.pingEvery = 200 * time.Millisecond
	l.mu.Unlock()
	var resyncs atomic.Int64
	l.Subscribe("toolgate_test", func(string) {}, func() { resyncs.Add(1) })
	pgtest.WaitFor(t, 5*time.Second, "first LISTEN", func() bool { return resyncs.Load() == 1 && l.Connected() })
	px.cut()
	pgtest.WaitFor(t, 5*time.Second, "listener notices the silent path", func() bool { return !l.Connected() })
	pgtest.WaitFor(t, 10*time.Second, "resync over a new connection", func() bool { return resyncs.Load() >= 2 && l.Connected() })
}

// cutProxy forwards TCP to the server; cut makes every connection made so
// far drop all bytes silently, as a partition does, while new connections
// pass.
type cutProxy struct {
	dsn string
	gen atomic.Int64
}

func (p *cutProxy) cut() { p.gen.Add(1) }

func startCutProxy(t *testing.T, dsn string) *cutProxy {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	upstream := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	u.Host = ln.Addr().String()
	p := &cutProxy{dsn: u.String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			born := p.gen.Load()
			go p.pipe(c, s, born)
			go p.pipe(s, c, born)
		}
	}()
	return p
}

// pipe copies from src to dst until src fails, dropping the bytes once the
// proxy was cut after the connection was made.
func (p *cutProxy) pipe(src, dst net.Conn, born int64) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		if p.gen.Load() != born {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}
