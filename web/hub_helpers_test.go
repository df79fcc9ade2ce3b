package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/web"
)

// hubTokens authenticates by bearer token or by a "tg_session" cookie, the
// two ways the server does.
type hubTokens map[string]web.HubPrincipal

func (t hubTokens) Authenticate(r *http.Request) (web.HubPrincipal, bool) {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		p, found := t[tok]
		p.Bearer = true
		return p, found
	}
	if c, err := r.Cookie("tg_session"); err == nil {
		p, found := t[c.Value]
		return p, found
	}
	return web.HubPrincipal{}, false
}

var hubTestTokens = hubTokens{
	"alice-token": {Principal: auth.Principal{Name: "alice", Role: "approver"}},
	"bob-token":   {Principal: auth.Principal{Name: "bob", Role: "admin"}},
	"cli-token":   {Principal: auth.Principal{Name: "carol", Role: "approver", Channels: []string{"cli"}}},
	"agent-token": {Principal: auth.Principal{Name: "agent", Role: "agent"}},
}

type hubEnv struct {
	t   *testing.T
	m   *approval.Manager
	hub *web.Hub
	srv *httptest.Server
	url string
}

func newHubEnv(t *testing.T, mopts approval.Options, hopts web.HubOptions) *hubEnv {
	t.Helper()
	return newHubEnvAuth(t, hubTestTokens, mopts, hopts)
}

// newHubEnvAuth is newHubEnv with its own authenticator.
func newHubEnvAuth(t *testing.T, auth web.HubAuthenticator, mopts approval.Options, hopts web.HubOptions) *hubEnv {
	t.Helper()
	if hopts.Logger == nil {
		hopts.Logger = slog.New(slog.DiscardHandler)
	}
	m := approval.New(mopts)
	hub := web.NewHub(m, auth, hopts)
	ctx, cancel := context.WithCancel(context.Background())
	go hub.Run(ctx)
	srv := httptest.NewServer(hub)
	t.Cleanup(func() {
		cancel()
		srv.Close()
		m.Shutdown()
	})
	return &hubEnv{t: t, m: m, hub: hub, srv: srv, url: "ws" + strings.TrimPrefix(srv.URL, "http")}
}

// dial connects as a browser: same-origin, with the session cookie.
func (e *hubEnv) dial(token string) *websocket.Conn {
	e.t.Helper()
	h := http.Header{}
	h.Set("Origin", e.srv.URL)
	h.Set("Cookie", "tg_session="+token)
	c, resp, err := websocket.DefaultDialer.Dial(e.url, h)
	if err != nil {
		e.t.Fatalf("dial: %v (status %v)", err, statusOf(resp))
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

func statusOf(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}

// wsMsg is any server message, decoded loosely.
type wsMsg struct {
	Type     string              `json:"type"`
	ID       string              `json:"id"`
	Code     string              `json:"code"`
	Etag     string              `json:"etag"`
	Approval approval.Approval   `json:"approval"`
	Pending  []approval.Approval `json:"pending"`
}

func readMsg(t *testing.T, c *websocket.Conn, within time.Duration) wsMsg {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(within))
	var m wsMsg
	if err := c.ReadJSON(&m); err != nil {
		t.Fatalf("read: %v", err)
	}
	return m
}

// readType reads until a message of the given type, skipping others.
func readType(t *testing.T, c *websocket.Conn, typ string, within time.Duration) wsMsg {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		m := readMsg(t, c, time.Until(deadline))
		if m.Type == typ {
			return m
		}
	}
}

func hubAsk(t *testing.T, m *approval.Manager, cmd, channel, session string) approval.Approval {
	t.Helper()
	req := engine.Request{Call: engine.NewCall("bash", map[string]any{"command": cmd}), ChannelID: channel}
	dec := engine.Decision{Level: policy.Ask, MatchedRule: "tools.bash", Reason: "Approval required for bash (rule: tools.bash)", ExternalPaths: []string{"/etc/passwd"}}
	a, _, err := m.Create(context.Background(), req, dec, session)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return a
}

// hubAskBig opens an ask whose shown arguments are about 64 KiB: sixteen
// arguments of 4,000 bytes each, under the cut a card and the websocket
// make of one long string.
func hubAskBig(t *testing.T, m *approval.Manager, seed string) approval.Approval {
	t.Helper()
	args := map[string]any{"command": "make " + seed}
	for i := range 16 {
		args[fmt.Sprintf("arg%d", i)] = strings.Repeat("x", 4000)
	}
	req := engine.Request{Call: engine.NewCall("bash", args), ChannelID: "web"}
	dec := engine.Decision{Level: policy.Ask, MatchedRule: "tools.bash", Reason: "Approval required for bash (rule: tools.bash)"}
	a, _, err := m.Create(context.Background(), req, dec, "")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return a
}

func sendDecide(t *testing.T, c *websocket.Conn, id, choice string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"type": "approval.decide", "id": id, "choice": choice, "comment": "via ws"})
	if err := c.WriteMessage(websocket.TextMessage, b); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
