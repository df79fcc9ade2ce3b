package integration

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// canaryServer is a real Streamable HTTP MCP server (the Go SDK's) whose
// tools read, overwrite and append to files, and count their runs: what
// reaches it shows in the files and the counts.
type canaryServer struct {
	srv *httptest.Server
	mu  sync.Mutex
	ran map[string]int
}

// fileArgs are the canary tools' arguments.
type fileArgs struct {
	Path string `json:"path"`
	Text string `json:"text,omitempty"`
}

func startCanaryServer(t *testing.T) *canaryServer {
	t.Helper()
	c := &canaryServer{ran: map[string]int{}}
	server := mcp.NewServer(&mcp.Implementation{Name: "canary", Version: "1"}, nil)
	tool := func(name string, run func(fileArgs) (string, error)) {
		mcp.AddTool(server, &mcp.Tool{Name: name}, func(_ context.Context, _ *mcp.CallToolRequest, in fileArgs) (*mcp.CallToolResult, any, error) {
			c.mu.Lock()
			c.ran[name]++
			c.mu.Unlock()
			text, err := run(in)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	}
	tool("read_file", func(a fileArgs) (string, error) {
		b, err := os.ReadFile(a.Path)
		return string(b), err
	})
	tool("write_file", func(a fileArgs) (string, error) { return "written", os.WriteFile(a.Path, []byte(a.Text), 0o600) })
	tool("append_file", func(a fileArgs) (string, error) {
		f, err := os.OpenFile(a.Path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return "", err
		}
		defer f.Close()
		_, err = f.WriteString(a.Text)
		return "appended", err
	})
	c.srv = httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *canaryServer) runs(tool string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ran[tool]
}

// httpGateway is a running `toolgate mcp --upstream`.
type httpGateway struct {
	endpoint string
	mu       sync.Mutex
	stderr   strings.Builder
}

func (g *httpGateway) output() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stderr.String()
}

// startHTTPGateway starts the real CLI in front of upstream on a free
// loopback port and returns the endpoint it serves, read from the line it
// prints.
func startHTTPGateway(t *testing.T, toolgateURL, token, upstream string) *httpGateway {
	t.Helper()
	cmd := exec.Command(toolgateCLI(t), "mcp", "--name", "canary", "--wait", "20", "--url", toolgateURL,
		"--upstream", upstream, "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "TOOLGATE_TOKEN="+token)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	g := &httpGateway{}
	serving := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			line := sc.Text()
			g.mu.Lock()
			g.stderr.WriteString(line + "\n")
			g.mu.Unlock()
			if rest, ok := strings.CutPrefix(line, "toolgate mcp: serving "); ok {
				serving <- strings.Fields(rest)[0]
			}
		}
		close(serving)
	}()
	select {
	case g.endpoint = <-serving:
	case <-time.After(20 * time.Second):
	}
	if g.endpoint == "" {
		t.Fatalf("toolgate mcp --upstream did not start:\n%s", g.output())
	}
	return g
}

// connectMCP connects the Go SDK's client to an endpoint over Streamable
// HTTP.
func connectMCP(t *testing.T, endpoint string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "toolgate-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatalf("initialize through the gateway: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callText is tools/call through cs: the result's text and isError.
func callText(t *testing.T, cs *mcp.ClientSession, tool string, args fileArgs) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n"), res.IsError
}

// TestMCPGatewayOverStreamableHTTP drives the Go SDK's MCP client through
// `toolgate mcp --upstream ... --listen ...` to a real Streamable HTTP MCP
// server, with the real toolgate server deciding: tools/list leaves out
// the denied tool, an allowed read returns the file, a denied write never
// reaches the server (the canary file and the server's count unchanged)
// and the model reads why, an ask waits for a person who allows it over
// REST and the append then happens, a browser page's foreign Origin is
// refused, toolgate unreachable refuses every call, and the MCP server
// down gives the client a JSON-RPC error. The token never shows in the
// gateway's output.
func TestMCPGatewayOverStreamableHTTP(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	up := startCanaryServer(t)
	canary := filepath.Join(s.Workspace, "canary.txt")
	writeFile(t, canary, "the canary lives\n")
	for tool, level := range map[string]string{"mcp__canary__read_file": "allow", "mcp__canary__write_file": "deny", "mcp__canary__append_file": "ask"} {
		if st, _, body := s.Call(s.Token, "PUT", "/api/v1/permissions/tools/"+tool, map[string]any{"level": level}, nil); st != 200 {
			t.Fatalf("set %s: %d %s", tool, st, body)
		}
	}
	agent := createToken(t, s, "mcp-http-agent", "agent")
	gw := startHTTPGateway(t, s.URL, agent, up.srv.URL+"/mcp")
	if !strings.HasSuffix(gw.endpoint, "/mcp") || !strings.HasPrefix(gw.endpoint, "http://127.0.0.1:") {
		t.Fatalf("the gateway serves %q, want a loopback URL with the upstream's path", gw.endpoint)
	}
	cs := connectMCP(t, gw.endpoint)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "read_file") || !strings.Contains(got, "append_file") || strings.Contains(got, "write_file") {
		t.Errorf("tools/list through the gateway: %s, want read_file and append_file without the denied write_file", got)
	}

	if text, isErr := callText(t, cs, "read_file", fileArgs{Path: canary}); isErr || text != "the canary lives\n" || up.runs("read_file") != 1 {
		t.Errorf("an allowed read: %q (error %v), the server ran it %d times", text, isErr, up.runs("read_file"))
	}

	text, isErr := callText(t, cs, "write_file", fileArgs{Path: canary, Text: "overwritten"})
	if !isErr || !strings.Contains(text, "toolgate refused this call") {
		t.Errorf("a denied write answered %q (error %v), want a refusal the model reads", text, isErr)
	}
	if b, _ := os.ReadFile(canary); string(b) != "the canary lives\n" || up.runs("write_file") != 0 {
		t.Fatalf("the denied write reached the server: the canary holds %q, the server ran it %d times", b, up.runs("write_file"))
	}

	// An ask waits for a person; an admin allows it once over REST.
	type answer struct {
		text  string
		isErr bool
	}
	appended := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "append_file", Arguments: fileArgs{Path: canary, Text: "and sings\n"}})
		if err != nil {
			appended <- answer{text: err.Error(), isErr: true}
			return
		}
		appended <- answer{isErr: res.IsError}
	}()
	var pending []wsApproval
	WaitFor(t, 10*time.Second, "the append's ask", func() bool {
		pending = listApprovals(t, s, s.Token, "pending")
		return len(pending) == 1
	})
	if b, _ := os.ReadFile(canary); string(b) != "the canary lives\n" || up.runs("append_file") != 0 {
		t.Fatalf("the append ran before anyone answered: %q", b)
	}
	if st, body := decide(t, s, s.Token, pending[0].ID, "allow_once"); st != 200 {
		t.Fatalf("allow the append: %d %s", st, body)
	}
	select {
	case a := <-appended:
		if a.isErr {
			t.Errorf("the allowed append failed: %s", a.text)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the allowed append did not answer")
	}
	if b, _ := os.ReadFile(canary); string(b) != "the canary lives\nand sings\n" {
		t.Errorf("after the person allowed it the canary holds %q, want the append", b)
	}

	// A browser page on another origin is refused before the server sees
	// anything.
	req, _ := http.NewRequest("POST", gw.endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"`+canary+`"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || up.runs("read_file") != 1 {
		t.Errorf("a foreign Origin: status %d, the server ran read_file %d times, want 403 and 1", resp.StatusCode, up.runs("read_file"))
	}

	// toolgate unreachable: every call is refused, the read included.
	down := connectMCP(t, startHTTPGateway(t, "http://127.0.0.1:1", agent, up.srv.URL+"/mcp").endpoint)
	text, isErr = callText(t, down, "read_file", fileArgs{Path: canary})
	if !isErr || !strings.Contains(text, "cannot reach toolgate") || up.runs("read_file") != 1 {
		t.Errorf("with toolgate down a read answered %q (error %v), the server ran it %d times; want a refusal", text, isErr, up.runs("read_file"))
	}

	// The MCP server down: a clean JSON-RPC error, not a hang.
	up.srv.CloseClientConnections()
	up.srv.Close()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: fileArgs{Path: canary}})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the MCP server") {
		t.Errorf("with the MCP server down a call answered %v, want the gateway's error", err)
	}
	if strings.Contains(gw.output(), agent) {
		t.Errorf("the gateway printed the token:\n%s", gw.output())
	}
}

// TestMCPGatewayHTTPListensOnLoopback: a --listen address other machines
// reach is refused unless --allow-remote says so.
func TestMCPGatewayHTTPListensOnLoopback(t *testing.T) {
	for _, c := range []struct {
		note   string
		listen string
		want   string
	}{
		{note: "every interface", listen: ":0", want: "--allow-remote"},
		{note: "a wildcard address", listen: "0.0.0.0:0", want: "--allow-remote"},
	} {
		r := runCLI(t, t.TempDir(), "http://127.0.0.1:1", "tg_test_token", "", "mcp", "--upstream", "http://127.0.0.1:1/mcp", "--listen", c.listen)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want a refusal naming %s", c.note, r.code, r.stderr, c.want)
		}
	}
}
