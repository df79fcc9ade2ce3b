package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The line client below writes JSON-RPC by hand. The gateway's own tests
// drive it with the Go SDK's client (mcp_gateway_test.go); the overhead
// measurement keeps this one because it adds next to nothing of its own
// to a call, so the figures are the gateway's; the setup test uses it too.

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
