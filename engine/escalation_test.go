package engine

import (
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestShellOperatorEscalation: for shell tools an allow that did not come
// from an approval override becomes ask on each risky character (docs/decisions.md#the-order-of-the-steps).
func TestShellOperatorEscalation(t *testing.T) {
	e, _ := compileYAML(t, `schema: tiered_policy
defaults: {"*": allow}
approval_overrides:
  - {id: o, tools: [bash], pattern: "re:^echo hi", action: allow}
  - {id: exact, tools: [bash], pattern: "ls | head", action: allow}
external_directory: allow`, "")
	for _, cmd := range []string{"ls; pwd", "ls & pwd", "ls | wc", "echo `id`", "cat < a", "echo > a", "echo $(id)", "echo ${X}", "ls\npwd", "ls\r\npwd", "ls && pwd", "ls || pwd"} {
		got := e.Evaluate(shellCall("bash", cmd))
		if got.Level != policy.Ask || got.MatchedRule != "tiered_policy:defaults.*" {
			t.Errorf("%q: got %s %q, want ask tiered_policy:defaults.* (escalated)", cmd, got.Level, got.MatchedRule)
		}
	}
	for _, cmd := range []string{"ls -la", "echo $HOME", "go test ./...", "echo 'a b'"} {
		if got := e.Evaluate(shellCall("bash", cmd)); got.Level != policy.Allow {
			t.Errorf("%q: got %s, want allow (no risky characters)", cmd, got.Level)
		}
	}
	if got := e.Evaluate(shellCall("bash", "echo hi; id")); got.Level != policy.Ask {
		t.Errorf("regex override: got %s %q, want ask (a regex override may match a chained command)", got.Level, got.MatchedRule)
	}
	if got := e.Evaluate(shellCall("bash", "ls | head")); got.Level != policy.Allow {
		t.Errorf("exact override: got %s %q, want allow (the person approved exactly this command)", got.Level, got.MatchedRule)
	}
	if got := e.Evaluate(pathCall("read_file", "a;b")); got.Level != policy.Allow {
		t.Errorf("path tool: got %s, want allow (escalation is for shell tools)", got.Level)
	}
}

// TestGlobD1: an anchored glob matches the whole value, so a trailing
// newline is not hidden (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm), and * never spans operators.
func TestGlobD1(t *testing.T) {
	cases := []struct {
		pattern, value string
		want           bool
	}{
		{"git status *", "git status\n", false},
		{"git status *", "git status", true},
		{"git status *", "git status -s", true},
		{"ls *", "ls; rm -rf /", false},
		{"ls *", "ls $(id)", false},
		{"ls *", "ls `id`", false},
		{"ls *", "ls | sh", false},
		{"ls *", "ls > x", false},
		{"echo ?", "echo a", true},
		{"echo ?", "echo ab", false},
		{"[abc]*", "[abc]x", true},
		{"[abc]*", "ax", false},
		{"C:\\Users\\*", "C:/Users/me", true},
		{"make", "make", true},
		{"make", "make test", false},
		{`a.b`, "axb", false},
	}
	for _, c := range cases {
		m := compileGlob(c.pattern)
		if got := m.matchShell(c.value); got != c.want {
			t.Errorf("glob %q on %q: got %v, want %v", c.pattern, c.value, got, c.want)
		}
	}
}

// TestPathGlobParents: path globs try every parent as p and p/.
func TestPathGlobParents(t *testing.T) {
	cases := []struct {
		pattern, value string
		want           bool
	}{
		{"**/.ssh/**", "/home/u/.ssh/id_rsa", true},
		{"**/.ssh/**", "/home/u/.ssh", false}, // only parents are tried, not the value plus /
		{"/etc/*", "/etc/ssh/sshd_config", true},
		{"/etc", "/etc/hosts", true},
		{"/etc/", "/etc/hosts", true},
		{"/opt", "/etc/hosts", false},
		{"*.pem", "key.pem", true},
		{"**/.env*", `C:\proj\.env.local`, true},
	}
	for _, c := range cases {
		m := compileGlob(c.pattern)
		if got := m.matchPath(c.value); got != c.want {
			t.Errorf("path glob %q on %q: got %v, want %v", c.pattern, c.value, got, c.want)
		}
	}
}

// TestRegexBackslashes: re: patterns also see \ as /.
func TestRegexBackslashes(t *testing.T) {
	m, _, err := compilePattern(`re:^C:/Users/`)
	if err != nil {
		t.Fatal(err)
	}
	if !m.matchPath(`C:\Users\me\a.txt`) {
		t.Error(`re:^C:/Users/ should match C:\Users\me\a.txt`)
	}
	if !m.matchShell(`type C:\Users\me`) == m.matchShell("type C:/Users/me") {
		t.Error("shell match should not depend on the separator")
	}
}
