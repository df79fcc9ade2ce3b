package web_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/web"
)

// TestHubAskReachesClientsWithin100ms: "the prompt at once": an ask
// created through the manager reaches two connected browsers within 100 ms.
func TestHubAskReachesClientsWithin100ms(t *testing.T) {
	e := newHubEnv(t, approval.Options{}, web.HubOptions{})
	a, b := e.dial("alice-token"), e.dial("bob-token")
	for _, c := range []*websocket.Conn{a, b} {
		if h := readMsg(t, c, time.Second); h.Type != "hello" || len(h.Pending) != 0 {
			t.Fatalf("first message: got %+v, want an empty hello", h)
		}
	}
	var wg sync.WaitGroup
	got := make([]wsMsg, 2)
	arrived := make([]time.Duration, 2)
	start := time.Now()
	for i, c := range []*websocket.Conn{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = readMsg(t, c, 2*time.Second)
			arrived[i] = time.Since(start)
		}()
	}
	ask := hubAsk(t, e.m, "cat /etc/passwd", "web", "s1")
	wg.Wait()
	for i := range got {
		if got[i].Type != "approval.requested" || got[i].Approval.ID != ask.ID {
			t.Errorf("client %d: got %s %q, want approval.requested %q", i, got[i].Type, got[i].Approval.ID, ask.ID)
		}
		if arrived[i] > 100*time.Millisecond {
			t.Errorf("client %d: the ask arrived after %v, want within 100ms", i, arrived[i])
		}
		ap := got[i].Approval
		if ap.Request.ToolName != "bash" || ap.Request.ToolArgs["command"] != "cat /etc/passwd" || ap.Asked.MatchedRule != "tools.bash" ||
			ap.Asked.Reason == "" || len(ap.Asked.ExternalPaths) != 1 {
			t.Errorf("client %d: the prompt lacks context to decide: %+v", i, ap)
		}
	}
}

// TestHubAnswerResolvesEverywhere: an answer on one client wakes the agent's
// Wait and clears the prompt on the other; a second answer is a conflict.
func TestHubAnswerResolvesEverywhere(t *testing.T) {
	e := newHubEnv(t, approval.Options{}, web.HubOptions{})
	ask := hubAsk(t, e.m, "make deploy", "web", "s1")
	a, b := e.dial("alice-token"), e.dial("bob-token")
	for _, c := range []*websocket.Conn{a, b} {
		h := readMsg(t, c, time.Second)
		if h.Type != "hello" || len(h.Pending) != 1 || h.Pending[0].ID != ask.ID {
			t.Fatalf("hello: got %+v, want the one pending ask", h)
		}
	}
	waited := make(chan approval.Approval, 1)
	go func() {
		got, _ := e.m.Wait(context.Background(), ask.ID, 10*time.Second)
		waited <- got
	}()
	sendDecide(t, a, ask.ID, "allow_once")
	decided := readType(t, a, "approval.decided", time.Second)
	if decided.ID != ask.ID || decided.Approval.Status != approval.StatusAllowed || decided.Approval.DecidedBy != "alice" {
		t.Errorf("decided reply: got %+v", decided)
	}
	select {
	case got := <-waited:
		if got.Status != approval.StatusAllowed || got.Decision != "allow" {
			t.Errorf("agent's Wait: got %q/%q, want allowed/allow", got.Status, got.Decision)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the agent's Wait did not wake on the websocket answer")
	}
	res := readType(t, b, "approval.resolved", time.Second)
	if res.Approval.ID != ask.ID || res.Approval.Choice != approval.ChoiceAllowOnce {
		t.Errorf("other client's resolved: got %+v", res)
	}
	sendDecide(t, b, ask.ID, "deny")
	if m := readType(t, b, "error", time.Second); m.Code != "conflict" || m.ID != ask.ID {
		t.Errorf("second answer: got %+v, want a conflict error", m)
	}
}

func TestHubBadMessages(t *testing.T) {
	e := newHubEnv(t, approval.Options{}, web.HubOptions{})
	ask := hubAsk(t, e.m, "make", "web", "s1")
	c := e.dial("alice-token")
	readMsg(t, c, time.Second)
	tests := []struct {
		note, raw, code string
	}{
		{"not JSON", `{nope`, "bad_request"},
		{"unknown type", `{"type":"approval.delete","id":"x"}`, "bad_request"},
		{"unknown choice", `{"type":"approval.decide","id":"` + ask.ID + `","choice":"maybe"}`, "bad_request"},
		{"no id", `{"type":"approval.decide","choice":"deny"}`, "bad_request"},
		{"unknown id", `{"type":"approval.decide","id":"nope","choice":"deny"}`, "not_found"},
		{"allow_always with no persister", `{"type":"approval.decide","id":"` + ask.ID + `","choice":"allow_always"}`, "bad_request"},
	}
	for _, tt := range tests {
		if err := c.WriteMessage(websocket.TextMessage, []byte(tt.raw)); err != nil {
			t.Fatal(err)
		}
		if m := readMsg(t, c, time.Second); m.Type != "error" || m.Code != tt.code {
			t.Errorf("%s: got %s/%s, want error/%s", tt.note, m.Type, m.Code, tt.code)
		}
	}
	if got, _ := e.m.Get(ask.ID); !got.Pending() {
		t.Errorf("bad messages changed the approval: %q", got.Status)
	}
}

// TestHubFilter: an approver limited to the cli channel neither sees nor
// answers web asks; answering one is not_found, as over REST, which does
// not tell an ask outside the approver's channels from no ask.
func TestHubFilter(t *testing.T) {
	e := newHubEnv(t, approval.Options{}, web.HubOptions{})
	web1 := hubAsk(t, e.m, "make", "web", "s1")
	cli1 := hubAsk(t, e.m, "make", "cli", "s1")
	c := e.dial("cli-token")
	h := readMsg(t, c, time.Second)
	if len(h.Pending) != 1 || h.Pending[0].ID != cli1.ID {
		t.Fatalf("filtered hello: got %+v, want only the cli ask", h.Pending)
	}
	hubAsk(t, e.m, "make web2", "web", "s1")
	cli2 := hubAsk(t, e.m, "make cli2", "cli", "s1")
	if m := readMsg(t, c, time.Second); m.Approval.ID != cli2.ID {
		t.Errorf("filtered event: got %s, want only the cli ask %s", m.Approval.ID, cli2.ID)
	}
	sendDecide(t, c, web1.ID, "allow_once")
	if m := readMsg(t, c, time.Second); m.Type != "error" || m.Code != "not_found" {
		t.Errorf("answer outside the filter: got %+v, want not_found", m)
	}
	if got, _ := e.m.Get(web1.ID); !got.Pending() {
		t.Error("an out-of-filter answer changed the approval")
	}
}

func TestHubPolicyChanged(t *testing.T) {
	e := newHubEnv(t, approval.Options{}, web.HubOptions{})
	c := e.dial("alice-token")
	readMsg(t, c, time.Second)
	e.hub.PolicyChanged(`"abc"`)
	if m := readMsg(t, c, time.Second); m.Type != "policy.changed" || m.Etag != `"abc"` {
		t.Errorf("got %+v, want policy.changed with the etag", m)
	}
}

// TestWSRefusals: authentication and the Origin check happen before the
// upgrade.
func TestWSRefusals(t *testing.T) {
	e := newHubEnv(t, approval.Options{}, web.HubOptions{AllowedOrigins: []string{"https://approvals.example.test"}})
	tests := []struct {
		note   string
		header map[string]string
		want   int
	}{
		{"no credential", map[string]string{"Origin": e.srv.URL}, http.StatusUnauthorized},
		{"unknown token", map[string]string{"Origin": e.srv.URL, "Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"agents may not connect", map[string]string{"Origin": e.srv.URL, "Authorization": "Bearer agent-token"}, http.StatusForbidden},
		{"foreign origin", map[string]string{"Origin": "http://evil.example.test", "Cookie": "tg_session=alice-token"}, http.StatusForbidden},
		{"foreign origin with a token", map[string]string{"Origin": "http://evil.example.test", "Authorization": "Bearer alice-token"}, http.StatusForbidden},
		{"null origin", map[string]string{"Origin": "null", "Cookie": "tg_session=alice-token"}, http.StatusForbidden},
		{"missing origin with only a cookie", map[string]string{"Cookie": "tg_session=alice-token"}, http.StatusForbidden},
		{"missing origin with a bearer token", map[string]string{"Authorization": "Bearer alice-token"}, http.StatusSwitchingProtocols},
		{"configured origin", map[string]string{"Origin": "https://approvals.example.test", "Cookie": "tg_session=alice-token"}, http.StatusSwitchingProtocols},
		{"same origin", map[string]string{"Origin": e.srv.URL, "Cookie": "tg_session=alice-token"}, http.StatusSwitchingProtocols},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		c, resp, err := websocket.DefaultDialer.Dial(e.url, h)
		if got := statusOf(resp); got != tt.want {
			t.Errorf("%s: got status %d (err %v), want %d", tt.note, got, err, tt.want)
		}
		if c != nil {
			c.Close()
		}
		if tt.want != http.StatusSwitchingProtocols && c != nil {
			t.Errorf("%s: connected, want refused", tt.note)
		}
	}
}

// TestHubDropsDeadClient: a client that never answers pings is dropped
// after PongWait; one that does stays.
func TestHubDropsDeadClient(t *testing.T) {
	// The waits are long enough that a loaded machine (make test beside
	// other work) still answers a ping in time: at 150 ms the live client
	// was dropped now and then.
	e := newHubEnv(t, approval.Options{}, web.HubOptions{PongWait: 600 * time.Millisecond, PingPeriod: 200 * time.Millisecond})
	dead := e.dial("alice-token") // never reads, so never answers a ping
	live := e.dial("bob-token")
	go func() { // reading answers pings
		for {
			if _, _, err := live.ReadMessage(); err != nil {
				return
			}
		}
	}()
	waitFor(t, "both connected", time.Second, func() bool { return e.hub.Clients() == 2 })
	waitFor(t, "dead client dropped", 5*time.Second, func() bool { return e.hub.Clients() == 1 })
	time.Sleep(1500 * time.Millisecond) // several PongWaits
	if n := e.hub.Clients(); n != 1 {
		t.Errorf("after several pong waits: got %d clients, want the live one", n)
	}
	_ = dead
}

// TestHubShutdown: when the manager shuts down, waiting browsers hear the
// cancellation and the hub closes.
func TestHubShutdown(t *testing.T) {
	e := newHubEnv(t, approval.Options{}, web.HubOptions{})
	ask := hubAsk(t, e.m, "make", "web", "s1")
	c := e.dial("alice-token")
	readMsg(t, c, time.Second)
	e.m.Shutdown()
	if m := readMsg(t, c, time.Second); m.Type != "approval.resolved" || m.Approval.ID != ask.ID || m.Approval.Status != approval.StatusCancelled {
		t.Errorf("got %+v, want the ask resolved as cancelled", m)
	}
	c.SetReadDeadline(time.Now().Add(time.Second))
	if _, _, err := c.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Errorf("after shutdown: got %v, want a going-away close", err)
	}
}
