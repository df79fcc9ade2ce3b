//go:build linux

package web_test

import (
	"context"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/web"
)

// dialSlow connects a client that never reads, with a tiny receive buffer
// so the server's writes to it back up after a few messages.
func (e *hubEnv) dialSlow(token string) *websocket.Conn {
	e.t.Helper()
	d := websocket.Dialer{NetDialContext: (&net.Dialer{
		Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
			})
			if err != nil {
				return err
			}
			return serr
		},
	}).DialContext}
	h := http.Header{}
	h.Set("Origin", e.srv.URL)
	h.Set("Cookie", "tg_session="+token)
	c, resp, err := d.DialContext(context.Background(), e.url, h)
	if err != nil {
		e.t.Fatalf("dial: %v (status %v)", err, statusOf(resp))
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// TestHubDropsSlowClient: a client that stops reading fills its queue and
// is dropped; the others get every message and the manager never waits.
func TestHubDropsSlowClient(t *testing.T) {
	e := newHubEnv(t, approval.Options{}, web.HubOptions{SendBuffer: 8, WriteWait: 5 * time.Second})
	e.dialSlow("alice-token")
	fast := e.dial("bob-token")
	readMsg(t, fast, time.Second)
	waitFor(t, "both connected", time.Second, func() bool { return e.hub.Clients() == 2 })
	const asks = 100
	received := make(chan int, 1)
	go func() {
		n := 0
		for n < asks {
			fast.SetReadDeadline(time.Now().Add(10 * time.Second))
			var m wsMsg
			if err := fast.ReadJSON(&m); err != nil {
				break
			}
			if m.Type == "approval.requested" {
				n++
			}
		}
		received <- n
	}()
	for i := range asks {
		hubAskBig(t, e.m, time.Now().String()+string(rune('a'+i%26)))
		time.Sleep(time.Millisecond) // a reading client keeps up with this pace
	}
	if n := <-received; n != asks {
		t.Errorf("fast client: got %d asks, want %d", n, asks)
	}
	waitFor(t, "slow client dropped", 5*time.Second, func() bool { return e.hub.Clients() == 1 })
	if got := e.hub.Dropped(); got != 1 {
		t.Errorf("Dropped: got %d, want 1 (the slow client, for a full queue)", got)
	}
}
