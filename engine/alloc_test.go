package engine

import "testing"

// TestEvaluateNoAllocWhenNothingMatches: with the default-like policy and
// the package built-in rules, a benign command and a path call that no rule
// matches cost no allocation (the prefilter's buffers live on the stack).
// With a filesystem, each bare word looked up costs one allocation: the
// path handed to the lookup (a system call, which costs far more).
func TestEvaluateNoAllocWhenNothingMatches(t *testing.T) {
	e, _ := Compile(decodePermissions(t, defaultPermissions), defaultBuiltin(t), Options{Workspace: "/ws/project", HomeDir: "/home/u"})
	with := func(gen []any) *Engine {
		perms := decodePermissions(t, defaultPermissions)
		perms["rules"] = gen
		e, _ := Compile(perms, defaultBuiltin(t), Options{Workspace: "/ws/project", HomeDir: "/home/u"})
		return e
	}
	onDisk, _ := Compile(decodePermissions(t, defaultPermissions), defaultBuiltin(t), Options{
		Workspace: "/ws/project", HomeDir: "/home/u",
		ResolvePath: func(p string) string { return p }, KindOf: func(string) FileKind { return NoFile },
	})
	shell := func(cmd string) *Request { return &Request{ToolName: "bash", ToolArgs: map[string]any{"command": cmd}} }
	cases := []struct {
		note   string
		e      *Engine
		req    *Request
		allocs float64
	}{
		{"benign command, default policy", e, shell("npm run build --silent"), 0},
		{"path call in the workspace, default policy", e, &Request{ToolName: "read_file", ToolArgs: map[string]any{"path": "/ws/project/src/main.go"}}, 0},
		{"git status on a filesystem: one word (status) looked up", onDisk, shell("git status"), 1},
		{"options are not looked up, nor split into a list", onDisk, shell("git log --oneline -5"), 1},
		{"two words looked up (run, build), not the program", onDisk, shell("npm run build --silent"), 2},
		{"benign command, 1,000 user rules", with(generatedRules(1000)), shell("npm run build --silent"), 0},
		{"path call, 1,000 user rules", with(generatedRules(1000)), &Request{ToolName: "read_file", ToolArgs: map[string]any{"path": "/ws/project/src/main.go"}}, 0},
	}
	for _, c := range cases {
		if d := c.e.Evaluate(c.req); d.MatchedRule != "tools."+c.req.ToolName {
			t.Fatalf("%s: matched %q, want the tool level (no rule may match)", c.note, d.MatchedRule)
		}
		if got := testing.AllocsPerRun(200, func() { c.e.Evaluate(c.req) }); got != c.allocs {
			t.Errorf("%s: got %v allocs per Evaluate, want %v", c.note, got, c.allocs)
		}
	}
}
