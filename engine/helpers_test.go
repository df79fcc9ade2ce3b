package engine

import (
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/policy"
)

// testOpts are the options of the engine tests: a POSIX workspace and home.
var testOpts = Options{Workspace: "/ws/project", HomeDir: "/home/u"}

// compileYAML compiles a permissions section and a built-in rule list
// written as YAML.
func compileYAML(t testing.TB, perms, builtin string) (*Engine, []policy.Problem) {
	t.Helper()
	return compileYAMLOpts(t, perms, builtin, testOpts)
}

// compileYAMLOpts is compileYAML with the given options.
func compileYAMLOpts(t testing.TB, perms, builtin string, opts Options) (*Engine, []policy.Problem) {
	t.Helper()
	var p map[string]any
	if err := yaml.Unmarshal([]byte(perms), &p); err != nil {
		t.Fatalf("perms YAML: %v", err)
	}
	var b []any
	if builtin != "" {
		if err := yaml.Unmarshal([]byte(builtin), &b); err != nil {
			t.Fatalf("builtin YAML: %v", err)
		}
	}
	return Compile(p, b, opts)
}

// shellCall and pathCall build requests on the web channel.
func shellCall(tool, cmd string) *Request {
	return &Request{Call: NewCall(tool, map[string]any{"command": cmd}), ChannelID: "web"}
}

func pathCall(tool, p string) *Request {
	return &Request{Call: NewCall(tool, map[string]any{"path": p}), ChannelID: "web"}
}

// writeCall is a write_file of content to p.
func writeCall(p, content string) *Request {
	return &Request{Call: NewCall("write_file", map[string]any{"path": p, "content": content}), ChannelID: "web"}
}

// editCall is an edit_file of p (one replacement).
func editCall(p string) *Request {
	return &Request{Call: NewCall("edit_file", map[string]any{"path": p, "old_string": "a", "new_string": "b"}), ChannelID: "web"}
}

// decisionCase is one table row: a request and the decision expected.
type decisionCase struct {
	note  string
	req   *Request
	level policy.Level
	rule  string
}

func runDecisionCases(t *testing.T, e *Engine, cases []decisionCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			got := e.Evaluate(c.req)
			if got.Level != c.level || got.MatchedRule != c.rule {
				t.Errorf("got %s %q, want %s %q (reason %q)", got.Level, got.MatchedRule, c.level, c.rule, got.Reason)
			}
			if want := formatReason(got.Level, c.req.Call.Tool(), got.MatchedRule); c.req.Scope == nil && got.MatchedRule != "" && got.Reason != want {
				t.Errorf("reason: got %q, want %q", got.Reason, want)
			}
		})
	}
}

func mustYAML(t testing.TB, text string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
