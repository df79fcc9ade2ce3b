package engine

import "testing"

// TestEvaluateNoAllocWhenNothingMatches: with the default-like policy and
// the package built-in rules, a benign command and a path call that no rule
// matches cost no allocation (the prefilter's buffers live on the stack).
func TestEvaluateNoAllocWhenNothingMatches(t *testing.T) {
	e, _ := Compile(decodePermissions(t, defaultPermissions), defaultBuiltin(t), Options{Workspace: "/ws/project", HomeDir: "/home/u"})
	with := func(gen []any) *Engine {
		perms := decodePermissions(t, defaultPermissions)
		perms["rules"] = gen
		e, _ := Compile(perms, defaultBuiltin(t), Options{Workspace: "/ws/project", HomeDir: "/home/u"})
		return e
	}
	cases := []struct {
		note string
		e    *Engine
		req  *Request
	}{
		{"benign command, default policy", e, &Request{ToolName: "bash", ToolArgs: map[string]any{"command": "npm run build --silent"}}},
		{"path call in the workspace, default policy", e, &Request{ToolName: "read_file", ToolArgs: map[string]any{"path": "/ws/project/src/main.go"}}},
		{"benign command, 1,000 user rules", with(generatedRules(1000)), &Request{ToolName: "bash", ToolArgs: map[string]any{"command": "npm run build --silent"}}},
		{"path call, 1,000 user rules", with(generatedRules(1000)), &Request{ToolName: "read_file", ToolArgs: map[string]any{"path": "/ws/project/src/main.go"}}},
	}
	for _, c := range cases {
		if d := c.e.Evaluate(c.req); d.MatchedRule != "tools."+c.req.ToolName {
			t.Fatalf("%s: matched %q, want the tool level (no rule may match)", c.note, d.MatchedRule)
		}
		if got := testing.AllocsPerRun(200, func() { c.e.Evaluate(c.req) }); got != 0 {
			t.Errorf("%s: got %v allocs per Evaluate, want 0", c.note, got)
		}
	}
}
