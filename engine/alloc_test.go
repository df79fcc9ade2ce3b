package engine

import (
	"testing"

	"github.com/toolgate/toolgate/policy"
)

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
	shell := func(cmd string) *Request { return &Request{Call: NewCall("bash", map[string]any{"command": cmd})} }
	cases := []struct {
		note   string
		e      *Engine
		req    *Request
		allocs float64
	}{
		{"benign command, default policy", e, shell("npm run build --silent"), 0},
		{"path call in the workspace, default policy", e, &Request{Call: NewCall("read_file", map[string]any{"path": "/ws/project/src/main.go"})}, 0},
		{"git status on a filesystem: one word (status) looked up", onDisk, shell("git status"), 1},
		{"options are not looked up, nor split into a list", onDisk, shell("git log --oneline -5"), 1},
		{"two words looked up (run, build), not the program", onDisk, shell("npm run build --silent"), 2},
		{"benign command, 1,000 user rules", with(generatedRules(1000)), shell("npm run build --silent"), 0},
		{"path call, 1,000 user rules", with(generatedRules(1000)), &Request{Call: NewCall("read_file", map[string]any{"path": "/ws/project/src/main.go"})}, 0},
	}
	for _, c := range cases {
		if d := c.e.Evaluate(c.req); d.MatchedRule != "tools."+c.req.Call.Tool() {
			t.Fatalf("%s: matched %q, want the tool level (no rule may match)", c.note, d.MatchedRule)
		}
		if got := testing.AllocsPerRun(200, func() { c.e.Evaluate(c.req) }); got != c.allocs {
			t.Errorf("%s: got %v allocs per Evaluate, want %v", c.note, got, c.allocs)
		}
	}
}

// TestRuleHitsCostNoAllocation: an allow, ask or deny rule hit on a plain
// command costs no allocation once its reason was built (reasonMemo): with
// a large policy in memory every allocation costs the collector more.
func TestRuleHitsCostNoAllocation(t *testing.T) {
	perms := decodePermissions(t, defaultPermissions)
	perms["rules"] = []any{
		map[string]any{"id": "allow_deploy", "tools": []any{"bash"}, "pattern": "make deploy *", "action": "allow"},
		map[string]any{"id": "ask_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "ask"},
		map[string]any{"id": "deny_delete", "tools": []any{"bash"}, "pattern": "kubectl delete *", "action": "deny"},
		map[string]any{"id": "ask_run", "tools": []any{"bash"}, "pattern": "npm * --watch", "action": "ask"},
	}
	e, problems := Compile(perms, nil, Options{Workspace: "/ws/project", HomeDir: "/home/u"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	for _, c := range []struct {
		note, command, rule string
		level               policy.Level
	}{
		{"ask rule, prefix glob", "git push origin main", "tiered_policy:rules:rules[ask_push]", policy.Ask},
		{"deny rule, prefix glob", "kubectl delete pod web-1", "tiered_policy:rules:deny:rules[deny_delete]", policy.Deny},
		{"ask rule, a glob the NFA runs", "npm run dev --watch", "tiered_policy:rules:rules[ask_run]", policy.Ask},
		{"allow rule, a program with no risky-option table", "make deploy --fast", "tiered_policy:rules:rules[allow_deploy]", policy.Allow},
	} {
		req := &Request{Call: NewCall("bash", map[string]any{"command": c.command})}
		d := e.Evaluate(req)
		if d.Level != c.level || d.MatchedRule != c.rule {
			t.Fatalf("%s: got %v by %q", c.note, d.Level, d.MatchedRule)
		}
		if got := testing.AllocsPerRun(200, func() { e.Evaluate(req) }); got != 0 {
			t.Errorf("%s: got %v allocs per Evaluate, want 0", c.note, got)
		}
	}
}
