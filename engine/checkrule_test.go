package engine_test

import (
	"errors"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// TestCheckRule: the kinds of CheckRule are told apart by errors.Is, and
// agree with the problems Compile reports for the same rule.
func TestCheckRule(t *testing.T) {
	cases := []struct {
		note    string
		tools   []string
		pattern string
		field   string
		kind    error
	}{
		{"a good rule", []string{"bash"}, "rm *", "", nil},
		{"no tools", nil, "rm *", "tools", policy.ErrNoTools},
		{"unknown tool", []string{"bash", "nope"}, "rm *", "tools", policy.ErrBadTools},
		{"mixed categories", []string{"bash", "read_file"}, "x", "tools", policy.ErrBadTools},
		{"empty pattern", []string{"bash"}, " ", "pattern", policy.ErrBadPattern},
		{"bad regex", []string{"bash"}, "re:(", "pattern", policy.ErrBadPattern},
		{"network tool", []string{"mcp_fetch_webpage"}, "x", "tools", policy.ErrNetworkTools},
		{"tools are checked before the pattern", []string{"nope"}, "re:(", "tools", policy.ErrBadTools},
	}
	for _, c := range cases {
		err := engine.CheckRule(&policy.Rule{Tools: c.tools, Pattern: c.pattern, Action: policy.Ask})
		if c.kind == nil {
			if err != nil {
				t.Errorf("%s: got %v, want nil", c.note, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, c.kind) || err.Field != c.field {
			t.Errorf("%s: got %v, want a %s error of kind %v", c.note, err, c.field, c.kind)
			continue
		}
		rule := map[string]any{"pattern": c.pattern, "action": "ask"}
		if c.tools != nil {
			tools := make([]any, len(c.tools))
			for i, tl := range c.tools {
				tools[i] = tl
			}
			rule["tools"] = tools
		}
		_, problems := engine.Compile(map[string]any{"schema": "tiered_policy", "rules": []any{rule}}, nil, engine.Options{})
		want := "permissions.rules[0]." + c.field
		if len(problems) == 0 || problems[0].Path != want || problems[0].Message != err.Message {
			t.Errorf("%s: Compile reports %v, want first %s: %s", c.note, problems, want, err.Message)
		}
	}
}
