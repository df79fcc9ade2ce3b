package engine_test

import (
	"errors"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// TestRemembered: what an "always allow" remembers is the call as the
// engine reads it; a network tool or an unreadable command gives nothing,
// which AlwaysAllowOverride reports as policy.ErrNothingToRemember.
func TestRemembered(t *testing.T) {
	cases := []struct {
		note              string
		tool              string
		args              map[string]any
		matchType, patt   string
		nothingToRemember bool
	}{
		{"a command, trimmed", "bash", map[string]any{"command": "  ls -l "}, "command", "ls -l", false},
		{"cmd when command is absent", "bash", map[string]any{"cmd": "pwd"}, "command", "pwd", false},
		{"an argv", "bash", map[string]any{"command": []any{"echo", "a b"}}, "command", "echo 'a b'", false},
		{"an unreadable command", "bash", map[string]any{"command": 3.0}, "", "", true},
		{"a path key before others", "read_file", map[string]any{"content": "x/y", "path": "/a"}, "path", "/a", false},
		{"a list of paths", "write_file", map[string]any{"paths": []any{"/a", "/b"}}, "path", "/a", false},
		{"no path at all", "read_file", map[string]any{"limit": 3.0}, "", "", true},
		{"a network tool", "mcp_fetch_webpage", map[string]any{"url": "https://x/y"}, "", "", true},
		{"an unknown tool", "mystery", map[string]any{"path": "/a"}, "", "", true},
	}
	for _, c := range cases {
		req := &engine.Request{Call: engine.NewCall(c.tool, c.args)}
		mt, p := engine.Remembered(req)
		if mt != c.matchType || p != c.patt {
			t.Errorf("%s: got %q %q, want %q %q", c.note, mt, p, c.matchType, c.patt)
		}
		_, err := engine.AlwaysAllowOverride(req)
		if got := errors.Is(err, policy.ErrNothingToRemember); got != c.nothingToRemember {
			t.Errorf("%s: AlwaysAllowOverride error %v, want nothing-to-remember %v", c.note, err, c.nothingToRemember)
		}
	}
	if _, err := engine.AlwaysAllowOverride(nil); !errors.Is(err, policy.ErrNoTool) {
		t.Errorf("nil request: got %v, want ErrNoTool", err)
	}
}
