package engine

import (
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestSeverityTable covers every row of the table of docs/decisions.md#severity-and-permission_mode, both modes.
func TestSeverityTable(t *testing.T) {
	cases := []struct {
		severity       string
		normal, strict policy.Level
	}{
		{"LOW", policy.Allow, policy.Allow},
		{"MEDIUM", policy.Allow, policy.Ask},
		{"HIGH", policy.Ask, policy.Ask},
		{"CRITICAL", policy.Ask, policy.Deny},
		{"EXTREME", policy.Ask, policy. // unknown is HIGH
						Ask},
		{"", policy.Ask, policy.Ask}, // missing is HIGH
		{"low", policy.Allow, policy. // case does not matter
						Allow},
	}
	for _, c := range cases {
		for _, mode := range []string{"normal", "strict"} {
			want := c.normal
			if mode == "strict" {
				want = c.strict
			}
			t.Run(c.severity+"/"+mode, func(t *testing.T) {
				rule := "{id: r, tools: [bash], pattern: \"make\"}"
				if c.severity != "" {
					rule = "{id: r, tools: [bash], pattern: \"make\", severity: " + c.severity + "}"
				}
				e, _ := compileYAML(t, "schema: tiered_policy\npermission_mode: "+mode+"\nrules: ["+rule+"]", "")
				got := e.Evaluate(shellCall("bash", "make"))
				if got.Level != want {
					t.Errorf("got %s, want %s", got.Level, want)
				}
			})
		}
	}
}

// TestExplicitActionBypassesSeverity: an action is used directly (docs/decisions.md#severity-and-permission_mode,
// 6.3), and an action that is not a level makes the rule inert (docs/configuration.md#validation).
func TestExplicitActionBypassesSeverity(t *testing.T) {
	e, problems := compileYAML(t, `schema: tiered_policy
permission_mode: normal
rules:
  - {id: d, tools: [bash], pattern: "rm *", action: deny, severity: LOW}
  - {id: blk, tools: [bash], pattern: "cat *", action: block}
  - {id: up, tools: [bash], pattern: "ls *", action: ALLOW}`, "")
	runDecisionCases(t, e, []decisionCase{
		{"deny action in normal mode", shellCall("bash", "rm x"), policy.Deny, "tiered_policy:rules:deny:rules[d]"},
		{"invalid action: rule is inert", shellCall("bash", "cat a"), policy.Ask, "default"},
		{"action case does not matter", shellCall("bash", "ls"), policy.Allow, "tiered_policy:rules:rules[up]"},
	})
	if !hasProblem(problems, "permissions.rules[1].action") {
		t.Errorf("problems: got %v, want one at permissions.rules[1].action", problems)
	}
}

// TestPermissionModeIsCaseInsensitive: STRICT is strict; anything else normal.
func TestPermissionModeIsCaseInsensitive(t *testing.T) {
	for _, c := range []struct {
		mode string
		want policy.Level
	}{{"STRICT", policy.Deny}, {"strict", policy.Deny}, {"normal", policy.Ask}, {"weird", policy.Ask}} {
		e, _ := compileYAML(t, "schema: tiered_policy\npermission_mode: "+c.mode+"\nrules: [{id: r, tools: [bash], pattern: make, severity: CRITICAL}]", "")
		if got := e.Evaluate(shellCall("bash", "make")).Level; got != c.want {
			t.Errorf("mode %q: got %s, want %s", c.mode, got, c.want)
		}
	}
}

func hasProblem(ps []policy.Problem, path string) bool {
	for _, p := range ps {
		if p.Path == path {
			return true
		}
	}
	return false
}
