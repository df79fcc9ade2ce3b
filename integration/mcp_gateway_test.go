package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mcpClient speaks MCP over stdio to `toolgate mcp -- node server-filesystem
// ROOT`, as an agent would: one JSON-RPC message per line.
type mcpClient struct {
	t    *testing.T
	in   io.WriteCloser
	out  *bufio.Scanner
	cmd  *exec.Cmd
	next int
}

// startGateway starts the real CLI in front of the real filesystem server
// from npm, with the agent token, and initializes the session.
func startGateway(t *testing.T, token, url string, roots ...string) *mcpClient {
	t.Helper()
	server := agentBinary(t, "server-filesystem")
	args := append([]string{"mcp", "--name", "fs", "--wait", "20", "--url", url, "--", "node", server}, roots...)
	cmd := exec.Command(toolgateCLI(t), args...)
	cmd.Env = append(os.Environ(), "TOOLGATE_TOKEN="+token)
	return startStdioMCP(t, cmd)
}

// startStdioMCP starts an MCP server that speaks stdio (the gateway, or a
// server itself) and initializes the session.
func startStdioMCP(t *testing.T, cmd *exec.Cmd) *mcpClient {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard // the server's banner
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &mcpClient{t: t, in: in, out: bufio.NewScanner(out), cmd: cmd}
	c.out.Buffer(make([]byte, 1<<20), 16<<20)
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	init := c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "toolgate-test", "version": "1"}})
	if !strings.Contains(string(init["result"]), "serverInfo") {
		t.Fatalf("initialize through the gateway: %s", init["result"])
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

func (c *mcpClient) send(msg map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(msg)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// request sends a request and reads lines until its answer.
func (c *mcpClient) request(method string, params any) map[string]json.RawMessage {
	c.t.Helper()
	c.next++
	id := c.next
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return c.answer(id, 30*time.Second)
}

// answer reads until the answer to id, or fails after the timeout.
func (c *mcpClient) answer(id int, timeout time.Duration) map[string]json.RawMessage {
	c.t.Helper()
	got := make(chan map[string]json.RawMessage, 1)
	go func() {
		for c.out.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(c.out.Bytes(), &m) == nil && string(m["id"]) == fmt.Sprint(id) {
				got <- m
				return
			}
		}
		got <- nil
	}()
	select {
	case m := <-got:
		if m == nil {
			c.t.Fatalf("the gateway closed before answering %d", id)
		}
		return m
	case <-time.After(timeout):
		c.t.Fatalf("no answer to %d within %s", id, timeout)
		return nil
	}
}

// call is tools/call; it returns the result's text and isError.
func (c *mcpClient) call(tool string, args map[string]any) (string, bool) {
	c.t.Helper()
	m := c.request("tools/call", map[string]any{"name": tool, "arguments": args})
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(m["result"], &res); err != nil {
		c.t.Fatalf("tools/call %s: no result: %s", tool, m["error"])
	}
	var text []string
	for _, p := range res.Content {
		text = append(text, p.Text)
	}
	return strings.Join(text, "\n"), res.IsError
}

// TestMCPGatewayInFrontOfFilesystemServer drives the real filesystem MCP
// server from npm through `toolgate mcp` and the real toolgate server:
// a read the policy allows runs, a write it denies never touches the canary
// file and the model reads why, a tool denied outright is not even listed,
// a path rule on an MCP tool refuses the file it names, a read outside the
// workspace waits for a person like any path tool's (refused here), an ask
// waits for a person (who allows it here, and the edit happens), and with
// toolgate unreachable every call is refused.
func TestMCPGatewayInFrontOfFilesystemServer(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	root := filepath.Join(s.Workspace, "files")
	outside := filepath.Join(t.TempDir(), "elsewhere")
	for _, d := range []string{root, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	canary := filepath.Join(root, "canary.txt")
	writeFile(t, canary, "the canary lives\n")
	writeFile(t, filepath.Join(root, "secret.txt"), "a secret\n")
	writeFile(t, filepath.Join(outside, "far.txt"), "far away\n")
	rule := map[string]any{"id": "no_mcp_secrets", "tools": []string{"mcp__fs__read_text_file"}, "pattern": "**/secret*", "action": "deny"}
	if st, _, body := s.Call(s.Token, "POST", "/api/v1/permissions/rules", rule, nil); st != 201 && st != 200 {
		t.Fatalf("a rule naming an MCP tool: %d %s", st, body)
	}
	for tool, level := range map[string]string{"mcp__fs__read_text_file": "allow", "mcp__fs__list_allowed_directories": "allow",
		"mcp__fs__write_file": "deny", "mcp__fs__move_file": "deny", "mcp__fs__edit_file": "ask"} {
		if st, _, body := s.Call(s.Token, "PUT", "/api/v1/permissions/tools/"+tool, map[string]any{"level": level}, nil); st != 200 {
			t.Fatalf("set %s: %d %s", tool, st, body)
		}
	}
	agent := createToken(t, s, "mcp-agent", "agent")
	c := startGateway(t, agent, s.URL, root, outside)

	list := c.request("tools/list", map[string]any{})
	if l := string(list["result"]); !strings.Contains(l, `"read_text_file"`) || strings.Contains(l, `"write_file"`) || strings.Contains(l, `"move_file"`) {
		t.Errorf("tools/list should keep read_text_file and leave out the denied write_file and move_file: %.600s", l)
	}

	if text, isErr := c.call("read_text_file", map[string]any{"path": canary}); isErr || !strings.Contains(text, "the canary lives") {
		t.Errorf("an allowed read: %q (error %v)", text, isErr)
	}

	if text, isErr := c.call("read_text_file", map[string]any{"path": filepath.Join(root, "secret.txt")}); !isErr || !strings.Contains(text, "no_mcp_secrets") {
		t.Errorf("a read the MCP tool's path rule denies answered %q (error %v)", text, isErr)
	}

	// A path outside the workspace asks, as any path tool's would; the
	// person refuses it.
	c.next++
	far := c.next
	c.send(map[string]any{"jsonrpc": "2.0", "id": far, "method": "tools/call", "params": map[string]any{"name": "read_text_file",
		"arguments": map[string]any{"path": filepath.Join(outside, "far.txt")}}})
	var asked []wsApproval
	WaitFor(t, 10*time.Second, "the outside read's ask", func() bool {
		asked = listApprovals(t, s, s.Token, "pending")
		return len(asked) == 1
	})
	if st, body := decide(t, s, s.Token, asked[0].ID, "deny"); st != 200 {
		t.Fatalf("deny the outside read: %d %s", st, body)
	}
	if m := c.answer(far, 30*time.Second); !strings.Contains(string(m["result"]), `"isError":true`) || strings.Contains(string(m["result"]), "far away") {
		t.Errorf("the refused outside read answered %s", m["result"])
	} else if r := string(m["result"]); !strings.Contains(r, "refused it when asked") || !strings.Contains(r, "from the test") {
		t.Errorf("the model should read that a person refused the outside read, with their comment: %s", r)
	}

	text, isErr := c.call("write_file", map[string]any{"path": canary, "content": "overwritten"})
	if !isErr || !strings.Contains(text, "toolgate refused this call") {
		t.Errorf("a denied write answered %q (error %v), want a refusal the model reads", text, isErr)
	}
	if b, _ := os.ReadFile(canary); string(b) != "the canary lives\n" {
		t.Fatalf("the denied write reached the server: the canary holds %q", b)
	}

	// An ask waits for a person; an admin allows it once over REST.
	c.next++
	id := c.next
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": "edit_file",
		"arguments": map[string]any{"path": canary, "edits": []map[string]any{{"oldText": "lives", "newText": "was edited"}}}}})
	var pending []wsApproval
	WaitFor(t, 10*time.Second, "the edit's ask", func() bool {
		pending = listApprovals(t, s, s.Token, "pending")
		return len(pending) == 1
	})
	if b, _ := os.ReadFile(canary); string(b) != "the canary lives\n" {
		t.Fatalf("the edit ran before anyone answered: %q", b)
	}
	if st, body := decide(t, s, s.Token, pending[0].ID, "allow_once"); st != 200 {
		t.Fatalf("allow the edit: %d %s", st, body)
	}
	if m := c.answer(id, 30*time.Second); strings.Contains(string(m["result"]), `"isError":true`) {
		t.Errorf("the allowed edit failed: %s", m["result"])
	}
	if b, _ := os.ReadFile(canary); string(b) != "the canary was edited\n" {
		t.Errorf("after the person allowed it the canary holds %q, want the edit", b)
	}

	// toolgate unreachable: every call is refused, the read included.
	down := startGateway(t, agent, "http://127.0.0.1:1", root)
	text, isErr = down.call("read_text_file", map[string]any{"path": canary})
	if !isErr || !strings.Contains(text, "cannot reach toolgate") {
		t.Errorf("with toolgate down a read answered %q (error %v), want a refusal", text, isErr)
	}
}
