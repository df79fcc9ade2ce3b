package engine

import (
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestUnreadInputDecisions: a command xargs or parallel completes from
// input toolgate does not read is asked about when that input may make it
// one a deny rule names, denied when it is one whatever the input, and
// left alone when no input could make it one. Every row's command is one
// an agent writes.
func TestUnreadInputDecisions(t *testing.T) {
	perms := map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "ask"}, "tools": map[string]any{"bash": "allow"},
		"rules": []any{
			map[string]any{"id": "no_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "deny"},
			map[string]any{"id": "no_secrets", "tools": []any{"bash"}, "pattern": "**/secrets/**", "action": "deny"},
			map[string]any{"id": "ask_tag", "tools": []any{"bash"}, "pattern": "git tag *", "action": "ask"},
		},
		"external_directory": map[string]any{"*": "allow"}}
	e, problems := Compile(perms, nil, Options{Workspace: "/ws", HomeDir: "/home/u"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	cases := []struct {
		note, command string
		want          policy.Level
		rule          string
	}{
		{note: "git's words from a file may be push (or a secret's path)", command: "xargs -a args.txt git", want: policy.Ask,
			rule: "tiered_policy:rules:deny:rules[no_push]+rules[no_secrets]"},
		{note: "a push whatever the input", command: "xargs -a refs.txt git push origin", want: policy.Deny,
			rule: "tiered_policy:rules:deny:rules[no_push]+rules[no_secrets]"},
		{note: "parallel's input from a file", command: "parallel -a args.txt git", want: policy.Ask},
		{note: "a replacement string", command: "parallel git {} ::: push", want: policy.Ask},
		{note: "the inputs written out are read", command: "parallel git ::: push", want: policy.Deny, rule: "tiered_policy:rules:deny:rules[no_push]"},
		{note: "files to remove may be secrets", command: "xargs -a files.txt rm -f", want: policy.Ask, rule: "tiered_policy:rules:deny:rules[no_secrets]"},
		{note: "an ask rule the input may meet", command: "xargs -a t.txt git", want: policy.Ask},
		{note: "no input makes echo a push", command: "xargs -a words.txt echo", want: policy.Ask},
		{note: "no unread input at all", command: "git status", want: policy.Allow},
	}
	for _, c := range cases {
		d := e.Evaluate(&Request{Call: NewCall("bash", map[string]any{"command": c.command})})
		if d.Level != c.want || c.rule != "" && d.MatchedRule != c.rule {
			t.Errorf("%s: %q is %s (%s), want %s (%s)", c.note, c.command, d.Level, d.MatchedRule, c.want, c.rule)
		}
	}
}
