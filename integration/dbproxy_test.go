package integration

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// dbProxy forwards TCP connections from a loopback port to PostgreSQL, so a
// test can cut one replica off from the database and let it back, while
// the other replicas (connected directly) keep it.
//
// It stands in for a network namespace: a replica in its own netns would
// need a veth pair, addresses and routes to reach both the test (HTTP) and
// PostgreSQL, and root; the proxy needs neither, and cuts the connection
// the two ways a network fails: refused (every connection closed at once,
// as a down host or a firewall reject) and silent (connections stay open
// and nothing gets through either way, as a partition or a dropped route,
// so the replica must notice by its own timeouts).
type dbProxy struct {
	t      testing.TB
	ln     net.Listener
	target string

	mu    sync.Mutex
	mode  proxyMode
	pairs map[*proxyPair]struct{}
}

// proxyMode is how the proxy treats traffic.
type proxyMode int

const (
	proxyOpen    proxyMode = iota // forward
	proxyRefuse                   // close every connection
	proxySilence                  // hold connections, forward nothing
)

// proxyPair is one client connection and its upstream (nil for one
// accepted while silent). silenced marks a pair held open by a cut.
type proxyPair struct {
	client, upstream net.Conn
	silenced         atomic.Bool
}

func (p *proxyPair) close() {
	p.client.Close()
	if p.upstream != nil {
		p.upstream.Close()
	}
}

// startDBProxy listens on a free loopback port and forwards to target
// (host:port). It stops when the test ends.
func startDBProxy(t testing.TB, target string) *dbProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dbProxy{t: t, ln: ln, target: target, pairs: map[*proxyPair]struct{}{}}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.closeAll()
	})
	return p
}

// proxiedDSN is dsn with its host and port replaced by the proxy's.
func (p *dbProxy) proxiedDSN(dsn string) string {
	p.t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		p.t.Fatalf("parse DSN: %v", err)
	}
	u.Host = p.ln.Addr().String()
	return u.String()
}

// Cut severs the link: refuse closes every connection now and every new
// one at once; silence keeps them open but passes no byte either way.
func (p *dbProxy) Cut(mode proxyMode) {
	p.mu.Lock()
	p.mode = mode
	pairs := p.pairs
	p.pairs = map[*proxyPair]struct{}{}
	p.mu.Unlock()
	for pair := range pairs {
		if mode == proxyRefuse {
			pair.close()
			continue
		}
		// Silence: the upstream half goes (PostgreSQL would drop the
		// session after a partition anyway); the client half stays open and
		// unanswered, and is closed when the link comes back, as a TCP
		// session that timed out during the partition would be.
		pair.silenced.Store(true)
		pair.upstream.Close()
		p.keep(pair)
	}
}

// Restore lets traffic through again. Connections held while silent are
// closed: their streams lost bytes, so the replica must reconnect.
func (p *dbProxy) Restore() {
	p.mu.Lock()
	p.mode = proxyOpen
	var held []*proxyPair
	for pair := range p.pairs {
		if pair.silenced.Load() {
			held = append(held, pair)
			delete(p.pairs, pair)
		}
	}
	p.mu.Unlock()
	for _, pair := range held {
		pair.close()
	}
}

func (p *dbProxy) keep(pair *proxyPair) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pairs[pair] = struct{}{}
}

func (p *dbProxy) closeAll() {
	p.mu.Lock()
	pairs := p.pairs
	p.pairs = map[*proxyPair]struct{}{}
	p.mu.Unlock()
	for pair := range pairs {
		pair.close()
	}
}

func (p *dbProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

// serve handles one client connection according to the mode at its start.
func (p *dbProxy) serve(c net.Conn) {
	p.mu.Lock()
	mode := p.mode
	p.mu.Unlock()
	switch mode {
	case proxyRefuse:
		c.Close()
		return
	case proxySilence:
		pair := &proxyPair{client: c}
		pair.silenced.Store(true)
		p.keep(pair)
		_, _ = io.Copy(io.Discard, c) // swallow until closed
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	pair := &proxyPair{client: c, upstream: up}
	p.mu.Lock()
	if p.mode != proxyOpen { // cut while dialing
		p.mu.Unlock()
		pair.close()
		return
	}
	p.pairs[pair] = struct{}{}
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	go func() {
		_, _ = io.Copy(c, up)
		if !pair.silenced.Load() {
			c.Close()
		}
	}()
}

// TestReplicasDBProxy checks the proxy the cut-off test relies on, against
// an echo server: open forwards; refused closes held and new connections;
// silent passes nothing either way while connections stay open; restore
// closes what was held and forwards new connections again.
func TestReplicasDBProxy(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	p := startDBProxy(t, echo.Addr().String())
	addr := p.ln.Addr().String()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial proxy: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// roundTrip writes a byte and reports what came back: "x", "closed" or
	// "silent" (nothing within 300 ms).
	roundTrip := func(c net.Conn) string {
		_, _ = c.Write([]byte("x"))
		_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		buf := make([]byte, 1)
		_, err := c.Read(buf)
		var ne net.Error
		switch {
		case err == nil:
			return string(buf)
		case errors.As(err, &ne) && ne.Timeout():
			return "silent"
		default:
			return "closed"
		}
	}
	check := func(note string, c net.Conn, want string) {
		t.Helper()
		if got := roundTrip(c); got != want {
			t.Errorf("%s: got %q, want %q", note, got, want)
		}
	}

	open := dial()
	check("open", open, "x")
	p.Cut(proxyRefuse)
	check("held connection after refuse", open, "closed")
	check("new connection while refused", dial(), "closed")
	p.Restore()
	open = dial()
	check("after restore", open, "x")
	p.Cut(proxySilence)
	check("held connection while silent", open, "silent")
	fresh := dial()
	check("new connection while silent", fresh, "silent")
	p.Restore()
	check("connection held through the silence, after restore", open, "closed")
	check("connection made during the silence, after restore", fresh, "closed")
	check("new connection after restore", dial(), "x")
}
