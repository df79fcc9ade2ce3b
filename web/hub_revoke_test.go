package web_test

import (
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/web"
)

// closedWithin reports whether the server closes c within d (messages
// before the close are skipped).
func closedWithin(c *websocket.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			var ne net.Error
			return !errors.As(err, &ne) || !ne.Timeout()
		}
	}
}

// TestHubDropsEndedCredentials: once a client's token or session has ended,
// an answer it sends is not taken and its connection is closed; Recheck
// closes such clients at once, and the periodic recheck does without being
// asked.
func TestHubDropsEndedCredentials(t *testing.T) {
	var alive atomic.Bool
	alive.Store(true)
	auth := web.HubAuthFunc(func(*http.Request) (web.HubPrincipal, bool) {
		return web.HubPrincipal{Principal: auth.Principal{Name: "dave", Role: "approver"}, Valid: alive.Load}, true
	})
	e := newHubEnvAuth(t, auth, approval.Options{}, web.HubOptions{RecheckEvery: time.Hour})
	ask := hubAsk(t, e.m, "make deploy", "web", "s1")

	answering := e.dial("any")
	readMsg(t, answering, time.Second)
	alive.Store(false)
	sendDecide(t, answering, ask.ID, "allow_once")
	if !closedWithin(answering, 2*time.Second) {
		t.Error("a client whose credential ended was not closed when it answered")
	}
	if got, err := e.m.Get(ask.ID); err != nil || got.Status != approval.StatusPending {
		t.Errorf("the ask after an answer from an ended credential: %+v, %v; want still pending", got, err)
	}

	alive.Store(true)
	idle := e.dial("any")
	readMsg(t, idle, time.Second)
	alive.Store(false)
	e.hub.Recheck()
	if !closedWithin(idle, 2*time.Second) {
		t.Error("Recheck did not close a client whose credential ended")
	}
	waitFor(t, "no clients", 2*time.Second, func() bool { return e.hub.Clients() == 0 })

	alive.Store(true)
	periodic := newHubEnvAuth(t, auth, approval.Options{}, web.HubOptions{RecheckEvery: 50 * time.Millisecond})
	c := periodic.dial("any")
	readMsg(t, c, time.Second)
	alive.Store(false)
	if !closedWithin(c, 2*time.Second) {
		t.Error("the periodic recheck did not close a client whose credential ended")
	}
}
