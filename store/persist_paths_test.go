package store

import (
	"testing"

	"github.com/toolgate/toolgate/engine"
)

// TestAlwaysAllowPathShapes: "always allow" remembers the first path value
// as the engine finds it (engine.FirstPathValue: lists and nested objects,
// ) and the command as the engine reads it (an argv array
// joined with quoting); a command the engine cannot read is not remembered.
func TestAlwaysAllowPathShapes(t *testing.T) {
	cases := []struct {
		note        string
		tool        string
		args        map[string]any
		wantPattern string
		wantType    string
	}{
		{"a list of paths", "write_file", map[string]any{"paths": []any{"/work/ws/a.txt", "/work/ws/b.txt"}}, "/work/ws/a.txt", "path"},
		{"a list under path", "write_file", map[string]any{"path": []any{"/work/ws/c.txt"}}, "/work/ws/c.txt", "path"},
		{"a nested object", "write_file", map[string]any{"args": map[string]any{"path": "/work/ws/d.txt"}}, "/work/ws/d.txt", "path"},
		{"objects in a list", "edit_file", map[string]any{"edits": []any{map[string]any{"file_path": "/work/ws/e.txt"}}}, "/work/ws/e.txt", "path"},
		{"an argv command", "bash", map[string]any{"command": []any{"npm", "run", "a b"}}, "npm run 'a b'", "command"},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			s, _ := openFixture(t, "config.yaml")
			o, created, err := s.AlwaysAllow(&engine.Request{ToolName: c.tool, ToolArgs: c.args})
			if err != nil || !created {
				t.Fatalf("got %v, %v, %v", o, created, err)
			}
			if o["pattern"] != c.wantPattern || o["match_type"] != c.wantType {
				t.Errorf("got pattern %v (%v), want %q (%s)", o["pattern"], o["match_type"], c.wantPattern, c.wantType)
			}
		})
	}
	s, _ := openFixture(t, "config.yaml")
	if o, _, err := s.AlwaysAllow(&engine.Request{ToolName: "bash", ToolArgs: map[string]any{"command": 42.0}}); err == nil {
		t.Errorf("an unreadable command: got %v, want an error", o)
	}
}
