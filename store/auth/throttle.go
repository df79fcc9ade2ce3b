package auth

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Throttle slows the guessing of tokens: a client (an IP address) that
// fails to authenticate Burst times within Window has every further wrong
// token refused, after a pause, until that window ends. A valid token
// always passes, so the rightful admin is never locked out
// (docs/operations.md#failed-sign-ins-are-throttled).
type Throttle struct {
	burst  int
	window time.Duration
	now    func() time.Time

	mu      sync.Mutex
	clients map[string]*failures
}

// failures is one client's failed attempts in its current window.
type failures struct {
	n     int
	since time.Time
}

// maxThrottled bounds the clients remembered: past it, windows that ended
// are forgotten, and if none has, the oldest is.
const maxThrottled = 10000

// DefaultThrottleBurst and DefaultThrottleWindow are the server's limits:
// ten failures a minute per address.
const (
	DefaultThrottleBurst  = 10
	DefaultThrottleWindow = time.Minute
)

// ThrottlePause is how long a refused attempt waits for its answer.
const ThrottlePause = 500 * time.Millisecond

// NewThrottle makes a throttle of burst failures per window; a burst of 0
// or less makes none (nil, which never blocks).
func NewThrottle(burst int, window time.Duration) *Throttle {
	if burst <= 0 {
		return nil
	}
	return &Throttle{burst: burst, window: window, now: time.Now, clients: map[string]*failures{}}
}

// Blocked reports whether a client has used up its failures, and for how
// long it stays refused.
func (t *Throttle) Blocked(client string) (time.Duration, bool) {
	if t == nil {
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ok := t.clients[client]
	if !ok {
		return 0, false
	}
	left := t.window - t.now().Sub(f.since)
	if left <= 0 {
		delete(t.clients, client)
		return 0, false
	}
	return left, f.n >= t.burst
}

// Failed counts one failed attempt of a client.
func (t *Throttle) Failed(client string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	f, ok := t.clients[client]
	if !ok || now.Sub(f.since) >= t.window {
		if !ok && len(t.clients) >= maxThrottled {
			t.pruneLocked(now)
		}
		f = &failures{since: now}
		t.clients[client] = f
	}
	f.n++
}

// pruneLocked forgets the windows that ended, or else the oldest one.
func (t *Throttle) pruneLocked(now time.Time) {
	var oldest string
	for c, f := range t.clients {
		if now.Sub(f.since) >= t.window {
			delete(t.clients, c)
			continue
		}
		if oldest == "" || f.since.Before(t.clients[oldest].since) {
			oldest = c
		}
	}
	if len(t.clients) >= maxThrottled && oldest != "" {
		delete(t.clients, oldest)
	}
}

// ClientOf is the address a request came from, without its port.
func ClientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
