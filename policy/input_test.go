package policy

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckRuleInput(t *testing.T) {
	badPattern := func(p string) error {
		if strings.HasPrefix(p, "re:(") {
			return errors.New("missing )")
		}
		return nil
	}
	cases := []struct {
		note    string
		rule    map[string]any
		partial bool
		field   string // "" when the rule is fine
		frag    string
	}{
		{"a full rule", map[string]any{"tools": []any{"bash"}, "pattern": "rm *", "action": "deny"}, false, "", ""},
		{"unknown field", map[string]any{"tools": "bash", "pattern": "x", "action": "ask", "when": 1}, false, "when", `unknown field "when"`},
		{"null id", map[string]any{"id": nil}, true, "id", "may not be null"},
		{"null action in a patch removes it", map[string]any{"action": nil}, true, "", ""},
		{"null action in a full rule", map[string]any{"tools": "bash", "pattern": "x", "action": nil}, false, "action", "may not be null"},
		{"bad level", map[string]any{"action": "block"}, true, "action", `无效级别 "block"`},
		{"level not a string", map[string]any{"action": 3}, true, "action", `无效级别 "3"`},
		{"bad severity", map[string]any{"severity": "huge"}, true, "severity", `invalid severity "huge"`},
		{"bad match type", map[string]any{"match_type": "url"}, true, "match_type", `invalid match_type "url"`},
		{"args match type", map[string]any{"tools": []any{"mcp__db__*"}, "pattern": `{"q":"*"}`, "action": "allow", "match_type": "args"}, false, "", ""},
		{"match type in another case", map[string]any{"match_type": "ARGS"}, true, "match_type", "only command, path or args"},
		{"pattern not a string", map[string]any{"pattern": 5}, true, "pattern", "pattern must be a string"},
		{"pattern that does not compile", map[string]any{"pattern": "re:("}, true, "pattern", "missing )"},
		{"empty tool name", map[string]any{"tools": " "}, true, "tools", "工具名不能为空"},
		{"empty tool list", map[string]any{"tools": []any{}}, true, "tools", "at least one tool"},
		{"a tool not a string", map[string]any{"tools": []any{"bash", 2}}, true, "tools[1]", "non-empty string"},
		{"tools of another type", map[string]any{"tools": 2}, true, "tools", "a tool name or a list"},
		{"empty id", map[string]any{"id": " "}, true, "id", "id may not be empty"},
		{"description not a string", map[string]any{"description": []any{}}, true, "description", "must be a string"},
		{"tools required", map[string]any{"pattern": "x", "action": "ask"}, false, "tools", "tools is required"},
		{"pattern required", map[string]any{"tools": "bash", "action": "ask"}, false, "pattern", "pattern is required"},
		{"action or severity required", map[string]any{"tools": "bash", "pattern": "x"}, false, "action", "an action"},
	}
	for _, c := range cases {
		err := CheckRuleInput("", MappingOf(c.rule), c.partial, badPattern)
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: got %v, want nil", c.note, err)
		case c.field != "" && (err == nil || err.Field != c.field || !strings.Contains(err.Message, c.frag)):
			t.Errorf("%s: got %v, want %s: ...%s...", c.note, err, c.field, c.frag)
		}
	}
}

func TestCheckSectionInput(t *testing.T) {
	cases := []struct {
		note  string
		sec   map[string]any
		field string
	}{
		{"fine", map[string]any{"defaults": map[string]any{"*": "ask"}, "tools": map[string]any{"bash": "ASK"}}, ""},
		{"defaults not an object", map[string]any{"defaults": "ask"}, "defaults"},
		{"defaults level", map[string]any{"defaults": map[string]any{"*": "no"}}, "defaults.*"},
		{"tool level", map[string]any{"tools": map[string]any{"bash": "no"}}, "tools.bash"},
		{"legacy tool entry is not checked here", map[string]any{"tools": map[string]any{"bash": map[string]any{"*": "no"}}}, ""},
		{"rule entry not an object", map[string]any{"rules": []any{"x"}}, "rules[0]"},
		{"override field", map[string]any{"approval_overrides": []any{map[string]any{"tools": "bash", "pattern": "x", "action": "nope"}}}, "approval_overrides[0].action"},
	}
	for _, c := range cases {
		err := CheckSectionInput(WrittenOf(c.sec), nil)
		got := ""
		if err != nil {
			got = err.Field
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: kind %v, want ErrInvalid", c.note, err.Err)
			}
		}
		if got != c.field {
			t.Errorf("%s: got field %q (%v), want %q", c.note, got, err, c.field)
		}
	}
	ext := []struct {
		note  string
		v     any
		field string
	}{
		{"plain level", "allow", ""},
		{"bad plain level", "maybe", "external_directory"},
		{"key level", map[string]any{"/tmp": "nope"}, "external_directory./tmp"},
		{"absent", nil, ""},
	}
	for _, c := range ext {
		err := CheckExternalInput(MappingOf(c.v))
		got := ""
		if err != nil {
			got = err.Field
		}
		if got != c.field {
			t.Errorf("external %s: got %q, want %q", c.note, got, c.field)
		}
	}
}
