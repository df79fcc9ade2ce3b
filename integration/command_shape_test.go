package integration

import (
	"slices"
	"testing"
)

// commandShapeConfig allows bash and the path tools, with external paths
// asked about: what decides below is the shape of tool_args.
const commandShapeConfig = `permissions:
  enabled: true
  schema: tiered_policy
  defaults: {"*": ask}
  tools: {bash: allow, write_file: allow, edit_file: allow}
  rules:
    - {id: ls_ok, tools: [bash], pattern: "ls *", action: allow}
  external_directory: {"*": ask}
`

// TestCommandShapesOverHTTP: a command array is its argv (
// docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm), path values nested in tool_args are judged, and any other
// non-string command is a 400 naming tool_args.command (also inside a
// batch, as calls[i].tool_args.command).
func TestCommandShapesOverHTTP(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: commandShapeConfig})
	type decision struct {
		Level         string   `json:"level"`
		MatchedRule   *string  `json:"matched_rule"`
		ExternalPaths []string `json:"external_paths"`
	}
	ok := []struct {
		note     string
		body     map[string]any
		level    string
		external string
	}{
		{"an argv is read as its words", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": []any{"cat", "/etc/shadow"}}}, "ask", "/etc/shadow"},
		{"an argv matches an allow rule as the joined command", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": []any{"ls", "-la"}}}, "allow", ""},
		{"an argv word with an operator is quoted, and asks as the quoted string would", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": []any{"ls", "a;b"}}}, "ask", ""},
		{"a path in a nested object", map[string]any{"tool_name": "write_file", "tool_args": map[string]any{"args": map[string]any{"path": "/etc/cron.d/x"}}}, "ask", "/etc/cron.d/x"},
		{"a path in objects in an array", map[string]any{"tool_name": "edit_file", "tool_args": map[string]any{"edits": []any{map[string]any{"file_path": "/etc/hosts"}}}}, "ask", "/etc/hosts"},
	}
	for _, c := range ok {
		t.Run(c.note, func(t *testing.T) {
			status, body := s.Do("POST", "/api/v1/evaluate", c.body)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			got := DecodeJSON[decision](t, body)
			if got.Level != c.level {
				t.Errorf("level: got %q, want %q (%s)", got.Level, c.level, body)
			}
			if c.external != "" && !slices.Contains(got.ExternalPaths, c.external) {
				t.Errorf("external_paths: got %q, want %q among them", got.ExternalPaths, c.external)
			}
		})
	}
	type apiError struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Details []struct {
				Field string `json:"field"`
			} `json:"details"`
		} `json:"error"`
	}
	bad := []struct {
		note, path string
		body       map[string]any
		field      string
	}{
		{"a number", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": 42}}, "tool_args.command"},
		{"an object", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": map[string]any{"argv": []any{"rm"}}}}, "tool_args.command"},
		{"an array with a number", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": []any{"rm", 1}}}, "tool_args.command"},
		{"a bad cmd", "/api/v1/evaluate", map[string]any{"tool_name": "mcp_exec_command", "tool_args": map[string]any{"cmd": true}}, "tool_args.cmd"},
		{"in a batch", "/api/v1/evaluate/batch", map[string]any{"calls": []any{
			map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "ls"}},
			map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": 7}},
		}}, "calls[1].tool_args.command"},
	}
	for _, c := range bad {
		t.Run(c.note, func(t *testing.T) {
			status, body := s.Do("POST", c.path, c.body)
			if status != 400 {
				t.Fatalf("status %d, want 400: %s", status, body)
			}
			got := DecodeJSON[apiError](t, body)
			if got.Error.Code != "bad_request" || len(got.Error.Details) == 0 || got.Error.Details[0].Field != c.field {
				t.Errorf("error: got %s, want bad_request naming %s", body, c.field)
			}
		})
	}
}
