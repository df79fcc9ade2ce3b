package mcpgate

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// policyDecider decides by a fixed table: a tool allowed, refused, or held
// until the test releases it. It stands for the toolgate server, whose
// real decisions the integration test drives.
type policyDecider struct {
	mu      sync.Mutex
	allowed map[string]bool
	hidden  map[string]bool
	hold    chan struct{} // tools named "slow" wait on it
	asked   []string
	// sawCancel is closed when a slow call's context ends.
	sawCancel chan struct{}
}

func (p *policyDecider) Decide(ctx context.Context, tool string, args json.RawMessage) Verdict {
	p.mu.Lock()
	p.asked = append(p.asked, tool+" "+string(args))
	p.mu.Unlock()
	if tool == "slow" {
		select {
		case <-p.hold:
		case <-ctx.Done():
			if p.sawCancel != nil {
				close(p.sawCancel)
			}
			return Verdict{Reason: "cancelled"}
		}
	}
	if p.allowed[tool] {
		return Verdict{Allow: true}
	}
	return Verdict{Reason: "the policy denies " + tool}
}

func (p *policyDecider) Hidden(_ context.Context, tool string) bool { return p.hidden[tool] }

// harness runs a gate between pipes: the test writes as the client and
// reads what reaches the server and what comes back to the client.
type harness struct {
	client   *io.PipeWriter
	server   *bufio.Scanner // what the server receives
	toClient *bufio.Scanner
	answer   *io.PipeWriter // the server's output
	done     chan error
}

func newHarness(t *testing.T, d Decider) *harness {
	t.Helper()
	clientR, clientW := io.Pipe()
	serverInR, serverInW := io.Pipe()
	serverOutR, serverOutW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	h := &harness{client: clientW, server: bufio.NewScanner(serverInR), toClient: bufio.NewScanner(toClientR), answer: serverOutW, done: make(chan error, 1)}
	h.toClient.Buffer(make([]byte, 64<<10), maxLine)
	g := &Gate{Decider: d}
	go func() { h.done <- g.Run(context.Background(), clientR, toClientW, serverOutR, serverInW) }()
	t.Cleanup(func() { clientW.Close(); serverOutW.Close() })
	return h
}

func (h *harness) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(h.client, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func next(t *testing.T, sc *bufio.Scanner, what string) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		if sc.Scan() {
			got <- sc.Text()
		} else {
			got <- "<closed>"
		}
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(5 * time.Second):
		t.Fatalf("nothing reached %s", what)
		return ""
	}
}

// TestGateDecidesEveryCall: allowed calls reach the server byte for byte,
// refused ones are answered as an error result the model reads and never
// reach it, and everything else passes through unchanged.
func TestGateDecidesEveryCall(t *testing.T) {
	d := &policyDecider{allowed: map[string]bool{"read_text_file": true}, hold: make(chan struct{})}
	h := newHarness(t, d)
	cases := []struct {
		note, line string
		toServer   bool   // the line reaches the server as written
		answer     string // else a part of the answer the client gets
	}{
		{note: "initialize passes", line: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, toServer: true},
		{note: "a notification passes", line: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, toServer: true},
		{note: "an allowed call, spaced oddly", line: `{"jsonrpc":"2.0", "id":"a", "method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/x"}}}`, toServer: true},
		{note: "a refused call", line: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/x","content":"y"}}}`,
			answer: `"isError":true`},
		{note: "a second method member in other case is not the method",
			line:   `{"jsonrpc":"2.0","id":3,"method":"tools/call","Method":"ping","params":{"name":"write_file","arguments":{}}}`,
			answer: "the policy denies write_file"},
		{note: "of a method written twice the last counts",
			line:   `{"jsonrpc":"2.0","id":4,"method":"ping","method":"tools/call","params":{"name":"write_file"}}`,
			answer: "the policy denies write_file"},
		{note: "an escaped method is the method", line: `{"jsonrpc":"2.0","id":5,"method":"tools\/call","params":{"name":"write_file"}}`,
			answer: "the policy denies write_file"},
		{note: "what the gate cannot read is not passed on", line: `{"jsonrpc":"2.0","id":6,"method":"tools/call",`, answer: `-32700`},
		{note: "a batch with a call is refused", line: `[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_text_file"}}]`, answer: `-32600`},
		{note: "a call without a name is refused", line: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{}}`, answer: `-32600`},
		{note: "arguments that are no object are refused", line: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read_text_file","arguments":[1]}}`, answer: `-32600`},
	}
	for _, c := range cases {
		h.send(t, c.line)
		if c.toServer {
			if got := next(t, h.server, "the server"); got != c.line {
				t.Errorf("%s: the server got %q, want the line as written", c.note, got)
			}
			continue
		}
		if got := next(t, h.toClient, "the client"); !strings.Contains(got, c.answer) {
			t.Errorf("%s: the client got %q, want %q in it", c.note, got, c.answer)
		}
	}
	// Nothing else reached the server: the next line it sees is this ping.
	h.send(t, `{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	if got := next(t, h.server, "the server"); !strings.Contains(got, `"id":10`) {
		t.Errorf("a refused call reached the server: %q", got)
	}
	// The server's answers come back unchanged.
	io.WriteString(h.answer, `{"jsonrpc":"2.0","id":10,"result":{}}`+"\n")
	if got := next(t, h.toClient, "the client"); got != `{"jsonrpc":"2.0","id":10,"result":{}}` {
		t.Errorf("the server's answer changed: %q", got)
	}
}

// TestGateCancelledCallNeverRuns: a call waiting for a person that the
// client cancels is dropped (no answer, never forwarded), and the
// cancellation itself is not forwarded; other messages flow meanwhile.
func TestGateCancelledCallNeverRuns(t *testing.T) {
	d := &policyDecider{allowed: map[string]bool{"slow": true}, hold: make(chan struct{}), sawCancel: make(chan struct{})}
	h := newHarness(t, d)
	h.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)
	h.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if got := next(t, h.server, "the server"); !strings.Contains(got, `"id":2`) {
		t.Fatalf("a ping waited behind a call being decided: %q", got)
	}
	h.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	select {
	case <-d.sawCancel:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancellation did not reach the call being decided")
	}
	h.send(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if got := next(t, h.server, "the server"); !strings.Contains(got, `"id":3`) {
		t.Fatalf("after the cancel the server got %q, want only the next ping", got)
	}
}

// TestGateHidesDeniedTools: the answer to tools/list leaves out the tools
// the decider hides; other answers are not touched.
func TestGateHidesDeniedTools(t *testing.T) {
	d := &policyDecider{hidden: map[string]bool{"write_file": true}}
	h := newHarness(t, d)
	h.send(t, `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`)
	next(t, h.server, "the server")
	io.WriteString(h.answer, `{"jsonrpc":"2.0","id":"l","result":{"tools":[{"name":"read_file"},{"name":"write_file"}],"nextCursor":"c"}}`+"\n")
	got := next(t, h.toClient, "the client")
	if strings.Contains(got, "write_file") || !strings.Contains(got, "read_file") || !strings.Contains(got, `"nextCursor":"c"`) {
		t.Errorf("tools/list answer: %s", got)
	}
	io.WriteString(h.answer, `{"jsonrpc":"2.0","id":"other","result":{"tools":[{"name":"write_file"}]}}`+"\n")
	if got := next(t, h.toClient, "the client"); !strings.Contains(got, "write_file") {
		t.Errorf("an answer to something else was filtered: %s", got)
	}
}

// TestGateEndsWithTheServer: when the server's output ends with a call in
// it (a crash), Run returns without waiting for the client's input, so the
// client is not left waiting for an answer that cannot come.
func TestGateEndsWithTheServer(t *testing.T) {
	d := &policyDecider{allowed: map[string]bool{"read_text_file": true}}
	h := newHarness(t, d)
	h.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/x"}}}`)
	next(t, h.server, "the server")
	h.answer.Close()
	select {
	case <-h.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the gate went on after the server's end, with the client's input still open")
	}
}
