package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPServerDoesNotGetTheToken: the MCP server the gateway starts gets
// the gateway's environment but not TOOLGATE_TOKEN.
func TestMCPServerDoesNotGetTheToken(t *testing.T) {
	t.Setenv("TOOLGATE_TOKEN", "tg-secret-for-the-gateway-only")
	t.Setenv("MCP_SERVER_SETTING", "kept")
	out := filepath.Join(t.TempDir(), "env.txt")
	var stdout, stderr bytes.Buffer
	run([]string{"mcp", "--name", "envcheck", "--url", "http://127.0.0.1:1", "--", "sh", "-c", "env > " + out},
		strings.NewReader(""), &stdout, &stderr, os.Getenv)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the server did not run: %v (stderr %q)", err, stderr.String())
	}
	env := string(b)
	if strings.Contains(env, "tg-secret-for-the-gateway-only") || strings.Contains(env, "TOOLGATE_TOKEN=") {
		t.Errorf("the MCP server got the token:\n%s", env)
	}
	if !strings.Contains(env, "MCP_SERVER_SETTING=kept") || !strings.Contains(env, "PATH=") {
		t.Errorf("the MCP server lost the rest of its environment:\n%s", env)
	}
}
