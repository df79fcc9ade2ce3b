package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fsGateway is one `toolgate mcp --name fs` in front of the real
// filesystem server from npm, driven by the Go SDK's client over stdio.
type fsGateway struct {
	cs     *mcp.ClientSession
	log    string // every message the server read
	stderr string // the gateway's and the server's output, for failures
}

// startFSGateway starts the real CLI with the agent's token, the Go SDK's
// CommandTransport running it as an MCP client runs a stdio server, and
// initializes the session. The server runs under bash, which execs it
// with its input copied to log by tee: log is what the server really
// read, and its process is node itself (see findProcess).
func startFSGateway(t *testing.T, url, token, log string, roots ...string) *fsGateway {
	t.Helper()
	server := agentBinary(t, "server-filesystem")
	upstream := append([]string{"bash", "-c", `exec node "$@" < <(exec tee -a "$0")`, log, server}, roots...)
	args := append([]string{"mcp", "--name", "fs", "--wait", "60", "--url", url, "--"}, upstream...)
	cmd := exec.Command(toolgateCLI(t), args...)
	cmd.Env = append(os.Environ(), "TOOLGATE_TOKEN="+token)
	g := &fsGateway{log: log, stderr: log + ".stderr"}
	errFile, err := os.Create(g.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close() // the child holds its own copy
	cmd.Stderr = errFile
	client := mcp.NewClient(&mcp.Implementation{Name: "toolgate-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g.cs, err = client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatalf("initialize through the gateway: %v\n%s", err, g.output())
	}
	t.Cleanup(func() { g.cs.Close() })
	return g
}

func (g *fsGateway) output() string {
	b, _ := os.ReadFile(g.stderr)
	return tail(string(b))
}

// sawCall reports whether the server read a tools/call holding every one
// of parts (a tool name, a path).
func (g *fsGateway) sawCall(parts ...string) bool {
	b, _ := os.ReadFile(g.log)
	for line := range bytes.Lines(b) {
		if !bytes.Contains(line, []byte(`"tools/call"`)) {
			continue
		}
		all := true
		for _, p := range parts {
			all = all && bytes.Contains(line, []byte(p))
		}
		if all {
			return true
		}
	}
	return false
}

// toolAnswer is what a tools/call gave the client: the result's text and
// isError, or the call's error.
type toolAnswer struct {
	text  string
	isErr bool
	err   error
}

// callAsync sends a tools/call; its answer arrives on the channel.
func (g *fsGateway) callAsync(tool string, args map[string]any) <-chan toolAnswer {
	out := make(chan toolAnswer, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			out <- toolAnswer{err: err}
			return
		}
		var text []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		out <- toolAnswer{text: strings.Join(text, "\n"), isErr: res.IsError}
	}()
	return out
}

// call is a tools/call and its answer; a protocol error fails the test.
func (g *fsGateway) call(t *testing.T, tool string, args map[string]any) (string, bool) {
	t.Helper()
	a := awaitAnswer(t, g.callAsync(tool, args), 60*time.Second, tool)
	if a.err != nil {
		t.Fatalf("tools/call %s: %v\n%s", tool, a.err, g.output())
	}
	return a.text, a.isErr
}

// awaitAnswer waits for a call's answer or fails the test.
func awaitAnswer(t *testing.T, res <-chan toolAnswer, timeout time.Duration, what string) toolAnswer {
	t.Helper()
	select {
	case a := <-res:
		return a
	case <-time.After(timeout):
		t.Fatalf("%s: no answer within %s", what, timeout)
		return toolAnswer{}
	}
}

// refused reports whether text reads as toolgate's refusal (matched
// loosely: the wording is the gateway's to change).
func refused(text string) bool {
	return strings.Contains(strings.ToLower(text), "refused")
}

// fsPolicy sets the levels of the filesystem server's tools and a rule
// that denies reading or editing a secret (read_text_file's level alone
// would allow it, edit_file's ask).
func fsPolicy(t *testing.T, s *Server) {
	t.Helper()
	rule := map[string]any{"id": "no_mcp_secrets", "tools": []string{"mcp__fs__read_text_file", "mcp__fs__edit_file"}, "pattern": "**/secret*", "action": "deny"}
	if st, _, body := s.Call(s.Token, "POST", "/api/v1/permissions/rules", rule, nil); st != 201 && st != 200 {
		t.Fatalf("a rule naming MCP tools: %d %s", st, body)
	}
	for tool, level := range map[string]string{"mcp__fs__read_text_file": "allow", "mcp__fs__list_allowed_directories": "allow",
		"mcp__fs__write_file": "deny", "mcp__fs__move_file": "deny", "mcp__fs__edit_file": "ask"} {
		if st, _, body := s.Call(s.Token, "PUT", "/api/v1/permissions/tools/"+tool, map[string]any{"level": level}, nil); st != 200 {
			t.Fatalf("set %s: %d %s", tool, st, body)
		}
	}
}

// fsRunFiles are newMCPFiles's files and a secret beside the canary.
func fsRunFiles(t *testing.T, s *Server) (mcpFiles, string) {
	t.Helper()
	f := newMCPFiles(t, s, t.TempDir())
	secret := filepath.Join(f.root, "secret.txt")
	writeFile(t, secret, "a secret\n")
	// A server a failed run left blocked on the FIFO.
	t.Cleanup(func() {
		if pid := findProcess("node", agentBinary(t, "server-filesystem"), f.root, f.outside); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return f, secret
}

// TestMCPGatewayInFrontOfFilesystemServer drives the real filesystem MCP
// server from npm through `toolgate mcp` and the real toolgate server with
// the Go SDK's client, and checks what the server really read (a copy of
// its input) and the files: tools/list leaves out the tools denied
// outright, an allowed read returns the file, a read and an edit a path
// rule denies never reach the server and the model reads the rule, a read
// outside the workspace waits for a person like any path tool's (refused
// here, with their comment), a denied write never reaches the server and
// the canary is kept, an ask waits for a person (who allows it here, and
// the edit happens), toolgate unreachable refuses every call, and the
// server crashing in a call gives the client an error, not a hang.
func TestMCPGatewayInFrontOfFilesystemServer(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	fsPolicy(t, s)
	f, secret := fsRunFiles(t, s)
	agent := createToken(t, s, "mcp-agent", "agent")
	g := startFSGateway(t, s.URL, agent, f.upstreamLog, f.root, f.outside)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	list, err := g.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if got := "," + strings.Join(names, ",") + ","; !strings.Contains(got, ",read_text_file,") || !strings.Contains(got, ",edit_file,") ||
		strings.Contains(got, ",write_file,") || strings.Contains(got, ",move_file,") {
		t.Errorf("tools/list: %s; want read_text_file and the asked edit_file, without the denied write_file and move_file", got)
	}

	if text, isErr := g.call(t, "read_text_file", map[string]any{"path": f.canary}); isErr || !strings.Contains(text, "the canary lives") ||
		!g.sawCall("read_text_file", f.canary) {
		t.Errorf("an allowed read: %q (error %v); the server read it: %v", text, isErr, g.sawCall("read_text_file", f.canary))
	}

	for _, c := range []struct {
		note, tool string
		args       map[string]any
	}{
		{note: "a read", tool: "read_text_file", args: map[string]any{"path": secret}},
		{note: "an edit", tool: "edit_file", args: map[string]any{"path": secret, "edits": []map[string]any{{"oldText": "a secret", "newText": "no secret"}}}},
	} {
		text, isErr := g.call(t, c.tool, c.args)
		if !isErr || !strings.Contains(text, "no_mcp_secrets") || strings.Contains(text, "a secret\n") {
			t.Errorf("%s the path rule denies answered %q (error %v), want a refusal naming no_mcp_secrets", c.note, text, isErr)
		}
		if g.sawCall(secret) {
			t.Errorf("%s the path rule denies reached the server", c.note)
		}
	}
	if msg := unchanged(secret, "a secret\n"); msg != "" {
		t.Errorf("the denied edit: %s", msg)
	}

	// A path outside the workspace asks, as any path tool's would; the
	// person refuses it, with a comment the model reads.
	far := g.callAsync("read_text_file", map[string]any{"path": f.far})
	var asked []wsApproval
	WaitFor(t, 10*time.Second, "the outside read's ask", func() bool {
		asked = listApprovals(t, s, s.Token, "pending")
		return len(asked) == 1
	})
	if st, body := decide(t, s, s.Token, asked[0].ID, "deny"); st != 200 {
		t.Fatalf("deny the outside read: %d %s", st, body)
	}
	if a := awaitAnswer(t, far, 30*time.Second, "the refused outside read"); a.err != nil || !a.isErr || !refused(a.text) ||
		!strings.Contains(a.text, "from the test") || strings.Contains(a.text, "far away") {
		t.Errorf("the refused outside read answered %+v; want a refusal with the person's comment", a)
	}
	if g.sawCall(f.far) {
		t.Errorf("the refused outside read reached the server")
	}

	text, isErr := g.call(t, "write_file", map[string]any{"path": f.canary, "content": "overwritten"})
	if !isErr || !refused(text) {
		t.Errorf("a denied write answered %q (error %v), want a refusal the model reads", text, isErr)
	}
	if msg := unchanged(f.canary, canaryText); msg != "" || g.sawCall("write_file") {
		t.Fatalf("the denied write reached the server (%v): %s", g.sawCall("write_file"), msg)
	}

	// An ask waits for a person; an admin allows it once over REST.
	edit := g.callAsync("edit_file", map[string]any{"path": f.canary, "edits": []map[string]any{{"oldText": "lives", "newText": "was edited"}}})
	var pending []wsApproval
	WaitFor(t, 10*time.Second, "the edit's ask", func() bool {
		pending = listApprovals(t, s, s.Token, "pending")
		return len(pending) == 1
	})
	if msg := unchanged(f.canary, canaryText); msg != "" || g.sawCall("edit_file") {
		t.Fatalf("the edit ran before anyone answered: %s", msg)
	}
	if st, body := decide(t, s, s.Token, pending[0].ID, "allow_once"); st != 200 {
		t.Fatalf("allow the edit: %d %s", st, body)
	}
	if a := awaitAnswer(t, edit, 30*time.Second, "the allowed edit"); a.err != nil || a.isErr {
		t.Errorf("the allowed edit failed: %+v", a)
	}
	if msg := unchanged(f.canary, "the canary was edited\n"); msg != "" {
		t.Errorf("after the person allowed it: %s", msg)
	}

	// toolgate unreachable: every call is refused, the read included, and
	// the server never sees it.
	down := startFSGateway(t, "http://127.0.0.1:1", agent, filepath.Join(t.TempDir(), "down.log"), f.root)
	text, isErr = down.call(t, "read_text_file", map[string]any{"path": f.canary})
	if !isErr || !strings.Contains(text, "reach toolgate") || strings.Contains(text, "the canary") || down.sawCall("read_text_file") {
		t.Errorf("with toolgate down a read answered %q (error %v), the server saw it: %v; want a refusal", text, isErr, down.sawCall("read_text_file"))
	}
	down.cs.Close()

	// The server crashing in a call: the client gets an error, not a hang.
	// A read of the FIFO blocks the server until it is killed.
	stuck := g.callAsync("read_text_file", map[string]any{"path": f.fifo})
	WaitFor(t, 20*time.Second, "the server to read the FIFO's call", func() bool { return g.sawCall(f.fifo) })
	pid := findProcess("node", agentBinary(t, "server-filesystem"), f.root, f.outside)
	if pid <= 0 {
		t.Fatal("the server's process is not found")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if a := awaitAnswer(t, stuck, 20*time.Second, "the call the server crashed in"); a.err == nil {
		t.Errorf("the call the server crashed in answered %+v, want an error", a)
	}
}

// TestBrowserAnswersMCPAsk: asks of the real filesystem server's calls
// through `toolgate mcp`, driven by the Go SDK's client, answered by a
// person in headless Chromium on /approvals. A read outside the workspace
// waits (the server has not read it) until the person allows it once, then
// returns the file; an edit the person denies is refused, the canary kept,
// and the server never reads it.
func TestBrowserAnswersMCPAsk(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	fsPolicy(t, s)
	f, _ := fsRunFiles(t, s)
	agent := createToken(t, s, "mcp-browser-agent", "agent")
	g := startFSGateway(t, s.URL, agent, f.upstreamLog, f.root, f.outside)

	bctx := newBrowser(t)
	login(t, bctx, s, s.Token)
	run(t, bctx, "open /approvals", chromedp.Navigate(s.URL+"/approvals"), chromedp.WaitVisible(tid("no-approvals")))
	waitJS(t, bctx, "the inbox to be live", `document.querySelector('[data-testid="live-status"]').dataset.state === "on"`)

	far := g.callAsync("read_text_file", map[string]any{"path": f.far})
	run(t, bctx, "the outside read's card", chromedp.WaitVisible(tid("approval")))
	if got := textOf(t, bctx, tid("approval-tool")); got != "read_text_file" {
		t.Errorf("card tool: %q, want read_text_file", got)
	}
	if got := textOf(t, bctx, tid("approval")); !strings.Contains(got, f.far) {
		t.Errorf("the card does not show the path read: %q", got)
	}
	select {
	case a := <-far:
		t.Fatalf("the asked read answered before anyone did: %+v", a)
	default:
	}
	if g.sawCall(f.far) {
		t.Fatal("the asked read reached the server before anyone answered")
	}
	run(t, bctx, "allow once", chromedp.Click(tid("allow-once")))
	if a := awaitAnswer(t, far, 30*time.Second, "the read allowed in the browser"); a.err != nil || a.isErr || !strings.Contains(a.text, strings.TrimSpace(farText)) {
		t.Errorf("the read allowed in the browser answered %+v, want the file", a)
	}
	if !g.sawCall("read_text_file", f.far) {
		t.Error("the allowed read never reached the server")
	}
	waitJS(t, bctx, "the card to leave", `document.querySelectorAll('[data-testid="approval"]').length === 0`)

	edit := g.callAsync("edit_file", map[string]any{"path": f.canary, "edits": []map[string]any{{"oldText": "lives", "newText": "was edited"}}})
	run(t, bctx, "the edit's card", chromedp.WaitVisible(tid("approval")))
	if got := textOf(t, bctx, tid("approval-tool")); got != "edit_file" {
		t.Errorf("card tool: %q, want edit_file", got)
	}
	run(t, bctx, "deny", chromedp.Click(tid("deny")))
	a := awaitAnswer(t, edit, 30*time.Second, "the edit denied in the browser")
	if a.err != nil || !a.isErr || !refused(a.text) {
		t.Errorf("the edit denied in the browser answered %+v, want a refusal", a)
	}
	if msg := unchanged(f.canary, canaryText); msg != "" || g.sawCall("edit_file") {
		t.Errorf("the denied edit reached the server (%v): %s", g.sawCall("edit_file"), msg)
	}
	if p := listApprovals(t, s, s.Token, "pending"); len(p) != 0 {
		t.Errorf("after both answers %d asks still wait", len(p))
	}
}
