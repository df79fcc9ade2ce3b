//lint:file-ignore SA1019 the gateway must pass MCP logging and sampling through while clients still use them, so the test sends them

package mcpgate

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstream is a real Streamable HTTP MCP server (the Go SDK's) with two
// tools that count their runs, behind a recorder of what reaches it.
type upstream struct {
	srv *httptest.Server
	mu  sync.Mutex
	ran map[string]int // tool runs, by name
	// seen are the requests that reached the server: method, session
	// header and, for POSTs, the JSON-RPC method.
	seen []string
}

// upstreamOptions shape the server: JSON answers instead of event
// streams, and an event store, which lets a client resume a cut stream.
type upstreamOptions struct {
	json      bool
	resumable bool
}

func newUpstream(t testing.TB, jsonResponse bool) *upstream {
	return newUpstreamWith(t, upstreamOptions{json: jsonResponse})
}

func newUpstreamWith(t testing.TB, o upstreamOptions) *upstream {
	t.Helper()
	u := &upstream{ran: map[string]int{}}
	server := mcp.NewServer(&mcp.Implementation{Name: "canary", Version: "1"}, nil)
	type textArgs struct {
		Text string `json:"text"`
	}
	tool := func(name string, run func(context.Context, *mcp.CallToolRequest, textArgs) (string, error)) {
		mcp.AddTool(server, &mcp.Tool{Name: name}, func(ctx context.Context, req *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
			u.mu.Lock()
			u.ran[name]++
			u.mu.Unlock()
			text, err := run(ctx, req, in)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	}
	for _, name := range []string{"read", "write", "slow"} {
		tool(name, func(ctx context.Context, req *mcp.CallToolRequest, in textArgs) (string, error) {
			// A notification on the way: it reaches the client through the
			// gateway's event stream.
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: name + " ran"})
			return name + ": " + in.Text, nil
		})
	}
	// sample asks the client's model: a request from the server to the
	// client, whose answer the client POSTs back.
	tool("sample", func(ctx context.Context, req *mcp.CallToolRequest, in textArgs) (string, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Text}}}})
		if err != nil {
			return "", err
		}
		return "the client's model said: " + res.Content.(*mcp.TextContent).Text, nil
	})
	opts := &mcp.StreamableHTTPOptions{JSONResponse: o.json}
	if o.resumable {
		opts.EventStore = mcp.NewMemoryEventStore(nil)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts)
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		json.Unmarshal(body, &m)
		seen := strings.TrimSpace(r.Method + " " + m.Method)
		if r.Header.Get("Last-Event-ID") != "" {
			seen += " resumed"
		}
		u.mu.Lock()
		u.seen = append(u.seen, seen)
		u.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) runs(tool string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.ran[tool]
}

func (u *upstream) saw(what string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, s := range u.seen {
		if s == what {
			return true
		}
	}
	return false
}

// newProxy serves a Proxy in front of the upstream endpoint on loopback.
func newProxy(t *testing.T, d Decider, endpoint string) *httptest.Server {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&Proxy{Decider: d, Upstream: u})
	t.Cleanup(srv.Close)
	return srv
}

// connect is the Go SDK's client over Streamable HTTP.
func connect(t *testing.T, endpoint string, logs chan<- string) (*mcp.ClientSession, error) {
	return connectWith(t, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, logs)
}

func connectWith(t *testing.T, transport *mcp.StreamableClientTransport, logs chan<- string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			if logs != nil {
				logs <- r.Params.Data.(string)
			}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestProxyDecidesEveryCall drives the SDK's client through the proxy to
// the SDK's server, both with event streams and with JSON answers: an
// allowed call runs and its notifications come along, a refused one is
// answered with the reason and never reaches the server, tools/list
// leaves out the hidden tool, and closing the session reaches the server.
func TestProxyDecidesEveryCall(t *testing.T) {
	for _, c := range []struct {
		note string
		json bool
	}{{note: "event-stream answers"}, {note: "JSON answers", json: true}} {
		t.Run(c.note, func(t *testing.T) {
			up := newUpstream(t, c.json)
			d := &policyDecider{allowed: map[string]bool{"read": true}, hidden: map[string]bool{"write": true}}
			proxy := newProxy(t, d, up.srv.URL+"/mcp")
			logs := make(chan string, 4)
			cs, err := connect(t, proxy.URL+"/mcp", logs)
			if err != nil {
				t.Fatalf("initialize through the proxy: %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatal(err)
			}
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
			}
			if got := strings.Join(names, ","); got != "read,sample,slow" {
				t.Errorf("tools/list through the proxy: %s, want all but the hidden write", got)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"text": "hi"}})
			if err != nil || res.IsError || resultText(res) != "read: hi" || up.runs("read") != 1 {
				t.Errorf("an allowed call: %v %v, ran %d", res, err, up.runs("read"))
			}
			if !c.json {
				select {
				case got := <-logs:
					if got != "read ran" {
						t.Errorf("the server's notification: %q", got)
					}
				case <-time.After(5 * time.Second):
					t.Error("the server's notification did not reach the client")
				}
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"text": "x"}})
			if err != nil || !res.IsError || !strings.Contains(resultText(res), "the policy denies write") {
				t.Errorf("a refused call: %+v %v", res, err)
			}
			if up.runs("write") != 0 {
				t.Errorf("the refused call reached the server (write ran %d times)", up.runs("write"))
			}
			cs.Close()
			if !up.saw("DELETE") {
				t.Errorf("closing the session did not reach the server: %v", up.seen)
			}
		})
	}
}

// TestProxyRelaysTheServersRequests: a request of the server to the
// client (sampling, asked while an allowed call runs) reaches the client
// on the call's event stream and the client's answer reaches the server.
func TestProxyRelaysTheServersRequests(t *testing.T) {
	up := newUpstream(t, false)
	proxy := newProxy(t, &policyDecider{allowed: map[string]bool{"sample": true}}, up.srv.URL+"/mcp")
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked := r.Params.Messages[0].Content.(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{Model: "stand-in", Role: "assistant", Content: &mcp.TextContent{Text: "yes to " + asked}}, nil
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: proxy.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{"text": "hello"}})
	if err != nil || res.IsError || resultText(res) != "the client's model said: yes to hello" {
		t.Errorf("a call whose server asks the client: %v %v", res, err)
	}
}

// TestProxyCancelledCallNeverRuns: a call waiting for a decision that the
// client gives up on ends its decision, never reaches the server, and
// leaves the session working.
func TestProxyCancelledCallNeverRuns(t *testing.T) {
	up := newUpstream(t, false)
	d := &policyDecider{allowed: map[string]bool{"slow": true, "read": true}, hold: make(chan struct{}), sawCancel: make(chan struct{})}
	proxy := newProxy(t, d, up.srv.URL+"/mcp")
	cs, err := connect(t, proxy.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := cs.CallTool(short, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}); err == nil {
		t.Fatal("a call given up on answered")
	}
	select {
	case <-d.sawCancel:
	case <-time.After(5 * time.Second):
		t.Fatal("the decision of the call given up on did not end")
	}
	close(d.hold)
	ctx, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"text": "after"}}); err != nil || resultText(res) != "read: after" {
		t.Errorf("the next call: %v %v", res, err)
	}
	if up.runs("slow") != 0 {
		t.Errorf("the call given up on ran %d times", up.runs("slow"))
	}
}

// cutOnce cuts the first answer to a tools/call after its first event,
// as a dropped connection would.
type cutOnce struct {
	once sync.Once
}

func (c *cutOnce) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || !bytes.Contains(body, []byte(`"tools/call"`)) {
		return resp, err
	}
	c.once.Do(func() { resp.Body = &cutAfterEvent{ReadCloser: resp.Body} })
	return resp, nil
}

// cutAfterEvent ends a stream with an error after its first event.
type cutAfterEvent struct {
	io.ReadCloser
	seen []byte
}

func (c *cutAfterEvent) Read(p []byte) (int, error) {
	if i := bytes.Index(c.seen, []byte("\n\n")); i >= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n, err := c.ReadCloser.Read(p[:1])
	c.seen = append(c.seen, p[:n]...)
	return n, err
}

// TestProxyResumesACutStream: when a call's event stream is cut after an
// event, the client resumes it through the proxy with Last-Event-ID and
// the server replays the call's answer.
func TestProxyResumesACutStream(t *testing.T) {
	up := newUpstreamWith(t, upstreamOptions{resumable: true})
	u, _ := url.Parse(up.srv.URL + "/mcp")
	proxy := httptest.NewServer(&Proxy{Decider: &policyDecider{allowed: map[string]bool{"read": true}}, Upstream: u, Transport: &cutOnce{}})
	defer proxy.Close()
	cs, err := connectWith(t, &mcp.StreamableClientTransport{Endpoint: proxy.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"text": "resumed"}})
	if err != nil || resultText(res) != "read: resumed" {
		t.Errorf("a call whose stream was cut: %v %v", res, err)
	}
	if !up.saw("GET resumed") || up.runs("read") != 1 {
		t.Errorf("the server saw %v and ran the call %d times, want one run and a resumed GET", up.seen, up.runs("read"))
	}
}

// TestProxyRefusesForeignRequests: a browser page's request (an Origin
// that is not loopback's, a Host that is not, as DNS rebinding sends) is
// refused before it reaches the server; a loopback Origin and an allowed
// one pass.
func TestProxyRefusesForeignRequests(t *testing.T) {
	up := newUpstream(t, true)
	u, _ := url.Parse(up.srv.URL + "/mcp")
	proxy := httptest.NewServer(&Proxy{Decider: &policyDecider{}, Upstream: u, Origins: []string{"https://app.example"}})
	defer proxy.Close()
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	cases := []struct {
		note, origin, host, path string
		status                   int
	}{
		{note: "no Origin (not a browser)", status: 200},
		{note: "a loopback Origin", origin: "http://localhost:3000", status: 200},
		{note: "an allowed Origin", origin: "https://app.example", status: 200},
		{note: "a foreign Origin", origin: "https://evil.example", status: 403},
		{note: "a null Origin", origin: "null", status: 403},
		{note: "a foreign Host on loopback", host: "evil.example", status: 403},
		{note: "another path", path: "/other", status: 404},
	}
	for _, c := range cases {
		path := "/mcp"
		if c.path != "" {
			path = c.path
		}
		req, _ := http.NewRequest("POST", proxy.URL+path, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.note, resp.StatusCode, c.status)
		}
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if n := len(up.seen); n != 3 {
		t.Errorf("the server saw %d requests, want the 3 passed: %v", n, up.seen)
	}
}

// TestProxyUpstreamDown: with the server gone, a call gets a JSON-RPC
// error naming the unreachable server, not a hang or a broken session,
// whether or not the client holds the server's event stream open; and so
// does initialize.
func TestProxyUpstreamDown(t *testing.T) {
	for _, c := range []struct {
		note       string
		noStream   bool
		wantReason string
	}{
		{note: "without the event stream", noStream: true, wantReason: "cannot reach the MCP server"},
		{note: "with the event stream", wantReason: "cannot reach the MCP server"},
	} {
		t.Run(c.note, func(t *testing.T) {
			up := newUpstream(t, false)
			proxy := newProxy(t, &policyDecider{allowed: map[string]bool{"read": true}}, up.srv.URL+"/mcp")
			cs, err := connectWith(t, &mcp.StreamableClientTransport{Endpoint: proxy.URL + "/mcp", DisableStandaloneSSE: c.noStream}, nil)
			if err != nil {
				t.Fatal(err)
			}
			up.srv.CloseClientConnections()
			up.srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{}})
			if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), c.wantReason) {
				t.Errorf("a call with the server down: %v", err)
			}
		})
	}
	proxy := newProxy(t, &policyDecider{}, "http://127.0.0.1:1/mcp")
	if _, err := connect(t, proxy.URL+"/mcp", nil); err == nil || !strings.Contains(err.Error(), "cannot reach the MCP server at 127.0.0.1:1") {
		t.Errorf("initialize with the server down: %v", err)
	}
}

// TestProxyRefusesRedirects: a redirect of the server is not passed on,
// since the client would follow it past the gateway.
func TestProxyRefusesRedirects(t *testing.T) {
	up := newUpstream(t, false)
	redirecting := httptest.NewServer(http.RedirectHandler(up.srv.URL+"/mcp", http.StatusTemporaryRedirect))
	defer redirecting.Close()
	proxy := newProxy(t, &policyDecider{}, redirecting.URL+"/mcp")
	if _, err := connect(t, proxy.URL+"/mcp", nil); err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Errorf("initialize answered by a redirect: %v", err)
	}
	if up.saw("POST initialize") {
		t.Error("the client followed the redirect past the gateway")
	}
}

// TestFilterEvents: an event stream passes byte for byte (ids, comments,
// retry hints, CRLF), but for the data rewrite changes, and events flow
// one by one.
func TestFilterEvents(t *testing.T) {
	rewrite := func(data []byte) ([]byte, bool) {
		if string(data) == "change\nme" {
			return []byte("changed"), true
		}
		return nil, false
	}
	long := strings.Repeat("x", 100<<10) // longer than one read
	cases := []struct{ note, in, want string }{
		{note: "untouched", in: "id: 1\nevent: message\ndata: {\"a\":1}\n\n", want: "id: 1\nevent: message\ndata: {\"a\":1}\n\n"},
		{note: "comments and retry", in: ": ping\n\nretry: 10\n\n", want: ": ping\n\nretry: 10\n\n"},
		{note: "rewritten, id kept", in: "id: 7\ndata: change\ndata:me\n\n", want: "id: 7\ndata: changed\n\n"},
		{note: "CRLF", in: "id: 8\r\ndata: change\r\ndata: me\r\n\r\ndata: keep\r\n\r\n", want: "id: 8\r\ndata: changed\n\ndata: keep\r\n\r\n"},
		{note: "a long line", in: "data: " + long + "\n\n", want: "data: " + long + "\n\n"},
		{note: "an unended event at the end", in: "data: change\ndata: me\n", want: "data: change\ndata: me\n"},
	}
	for _, c := range cases {
		var out bytes.Buffer
		if err := copyEvents(&out, strings.NewReader(c.in), rewrite); err != nil {
			t.Fatalf("%s: %v", c.note, err)
		}
		if out.String() != c.want {
			t.Errorf("%s: got %.200q, want %.200q", c.note, out.String(), c.want)
		}
	}
}

// allowAll allows every call: the benchmark measures the proxy, not a
// decision.
type allowAll struct{}

func (allowAll) Decide(context.Context, string, json.RawMessage) Verdict { return Verdict{Allow: true} }
func (allowAll) Hidden(context.Context, string) bool                     { return false }

// BenchmarkProxyCall is one allowed tools/call with the SDK's client and
// server, straight to the server and through the proxy.
func BenchmarkProxyCall(b *testing.B) {
	up := newUpstream(b, false)
	proxy := httptest.NewServer(&Proxy{Decider: allowAll{}, Upstream: mustURL(up.srv.URL + "/mcp")})
	defer proxy.Close()
	for _, c := range []struct{ note, endpoint string }{{"direct", up.srv.URL + "/mcp"}, {"through the proxy", proxy.URL + "/mcp"}} {
		b.Run(c.note, func(b *testing.B) {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: c.endpoint, DisableStandaloneSSE: true}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			for b.Loop() {
				if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"text": "x"}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
