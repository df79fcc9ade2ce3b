package engine_test

import (
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// TestDenyGlobsMatchAnyCharacter: in a deny or ask rule's glob, * and ?
// match any character, so a character outside the reference's class (+ = ~
// @ { , ; and the rest) does not slip a command or a path past it. An allow
// rule keeps the narrow class, and a call the reference already decides at
// the same level keeps its matched rule.
func TestDenyGlobsMatchAnyCharacter(t *testing.T) {
	perms := map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "ask"}, "tools": map[string]any{"bash": "allow", "read_file": "allow"},
		"rules": []any{
			map[string]any{"id": "no_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "deny"},
			map[string]any{"id": "no_secrets", "tools": []any{"read_file"}, "pattern": "/ws/secrets/*", "action": "deny"},
			map[string]any{"id": "ask_tag", "tools": []any{"bash"}, "pattern": "git tag ?*", "action": "ask"},
			map[string]any{"id": "echo_ok", "tools": []any{"bash"}, "pattern": "echo *", "action": "allow"},
		},
		"external_directory": map[string]any{"*": "allow"}}
	e, problems := engine.Compile(perms, nil, engine.Options{Workspace: "/ws", HomeDir: "/home/u"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	cases := []struct {
		note, tool, value string
		want              policy.Level
		rule              string
	}{
		{"a forced refspec with +", "bash", "git push origin +main", policy.Deny, "tiered_policy:rules:deny:rules[no_push]"},
		{"a refspec with @{u}", "bash", "git push origin main@{u}", policy.Deny, "tiered_policy:rules:deny:rules[no_push]"},
		{"an option with =", "bash", "git push --force-with-lease=main origin", policy.Deny, "tiered_policy:rules:deny:rules[no_push]"},
		{"a comma list", "bash", "git push origin a,b", policy.Deny, "tiered_policy:rules:deny:rules[no_push]"},
		{"a tilde", "bash", "git push origin ~main", policy.Deny, "tiered_policy:rules:deny:rules[no_push]"},
		{"the plain push", "bash", "git push origin main", policy.Deny, "tiered_policy:rules:deny:rules[no_push]"},
		{"an ask glob with ?", "bash", "git tag +v1", policy.Ask, "tiered_policy:rules:rules[ask_tag]"},
		{"a path with ;", "read_file", "/ws/secrets/a;b", policy.Deny, "tiered_policy:rules:deny:rules[no_secrets]"},
		{"a path with = and ,", "read_file", "/ws/secrets/k=v,w", policy.Deny, "tiered_policy:rules:deny:rules[no_secrets]"},
		{"a path with @", "read_file", "/ws/secrets/@key", policy.Deny, "tiered_policy:rules:deny:rules[no_secrets]"},

		{"an ordinary read", "read_file", "/ws/src/a+b.go", policy.Allow, "tools.read_file"},
		{"an ordinary command with +", "bash", "git log --format=%h+%s", policy.Allow, "tools.bash"},
		{"an allow rule keeps the class", "bash", "echo a+b", policy.Allow, "tools.bash"},
		{"an allow rule within the class", "bash", "echo hello", policy.Allow, "tiered_policy:rules:rules[echo_ok]"},
	}
	for _, c := range cases {
		key := "command"
		if c.tool == "read_file" {
			key = "path"
		}
		d := e.Evaluate(&engine.Request{Call: engine.NewCall(c.tool, map[string]any{key: c.value}), ChannelID: "web"})
		if d.Level != c.want || d.MatchedRule != c.rule {
			t.Errorf("%s: %q is %s (%s), want %s (%s)", c.note, c.value, d.Level, d.MatchedRule, c.want, c.rule)
		}
	}
}
