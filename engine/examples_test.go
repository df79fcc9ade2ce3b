package engine_test

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine"
)

// TestRuleExamples: a rule's examples are checked when the policy is
// compiled; each that does not hold is a problem naming the rule, the list
// and the example's place, and the rule still decides.
func TestRuleExamples(t *testing.T) {
	rule := func(id string, tools []any, pattern, action string, examples map[string]any) map[string]any {
		r := map[string]any{"id": id, "tools": tools, "pattern": pattern, "action": action, "examples": examples}
		if strings.HasPrefix(pattern, "{") {
			r["match_type"] = "args"
		}
		return r
	}
	bash := []any{"bash"}
	cases := []struct {
		note    string
		rule    map[string]any
		problem string // "" when every example holds
	}{
		{"prefix rule, both lists hold", rule("push", bash, "git push *", "deny",
			map[string]any{"match": []any{"git push origin main", "git push"}, "no_match": []any{"git pull", "git status"}}), ""},
		{"a deny rule matches its command behind a program option", rule("push", bash, "git push *", "deny",
			map[string]any{"match": []any{"git -C repo push --force"}}), ""},
		{"an ask rule's * reaches a comma where that asks (a default of allow shows it)", rule("view", bash, "gh pr view *", "ask",
			map[string]any{"match": []any{"gh pr view 7888 --json title,body,comments"}}), ""},
		{"an allow glob never matches a second command", rule("st", bash, "git status *", "allow",
			map[string]any{"no_match": []any{"git status; rm -rf /"}}), ""},
		{"a match that does not hold", rule("push", bash, "git push *", "deny",
			map[string]any{"match": []any{"git pull origin"}}), `permissions.rules[0].examples.match[0]: rule "push" does not match its example "git pull origin"`},
		{"a no_match that matches", rule("push", bash, "git push *", "ask",
			map[string]any{"no_match": []any{"ok", "git push x"}}), `permissions.rules[0].examples.no_match[1]: rule "push" matches "git push x", listed under no_match`},
		{"path rule", rule("env", []any{"read_file"}, "**/.env", "deny",
			map[string]any{"match": []any{"/ws/project/.env"}, "no_match": []any{"/ws/project/src/main.go"}}), ""},
		{"an MCP server's every tool", rule("fsw", []any{"mcp__fs__*"}, "/srv/**", "deny",
			map[string]any{"match": []any{"/srv/data/x"}}), ""},
		{"args rule", rule("big", []any{"mcp__db__query"}, `{"sql":"DROP *"}`, "deny",
			map[string]any{"match": []any{`{"sql":"DROP TABLE users"}`}, "no_match": []any{`{"sql":"SELECT 1"}`}}), ""},
		{"args example that is not JSON", rule("big", []any{"mcp__db__query"}, `{"sql":"DROP *"}`, "deny",
			map[string]any{"match": []any{"DROP TABLE"}}), `must be the arguments as a JSON object`},
		{"examples of the wrong shape", rule("push", bash, "git push *", "deny",
			map[string]any{"match": "git push", "maybe": []any{"x"}}), `unknown key "maybe" in examples`},
	}
	for _, c := range cases {
		perms := map[string]any{"schema": "tiered_policy", "rules": []any{c.rule}}
		e, problems := engine.Compile(perms, nil, engine.Options{Workspace: "/ws/project", HomeDir: "/home/u"})
		var got []string
		for _, p := range problems {
			got = append(got, p.Path+": "+p.Message)
		}
		all := strings.Join(got, "\n")
		switch {
		case c.problem == "" && len(got) > 0:
			t.Errorf("%s: problems %v, want none", c.note, got)
		case c.problem != "" && !strings.Contains(all, c.problem):
			t.Errorf("%s: problems %q, want one with %q", c.note, all, c.problem)
		}
		if e == nil {
			t.Fatalf("%s: no engine", c.note)
		}
	}
}
