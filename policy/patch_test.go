package policy

import (
	"reflect"
	"testing"
)

func TestDecodeRulePatch(t *testing.T) {
	cases := []struct {
		note  string
		body  map[string]any
		want  map[string]any
		newID string
	}{
		{"set and remove", map[string]any{"action": "deny", "severity": nil},
			map[string]any{"action": "deny", "severity": nil}, ""},
		{"one tool name is a list", map[string]any{"tools": "bash"},
			map[string]any{"tools": []any{"bash"}}, ""},
		{"level in any case is written by name", map[string]any{"action": "ASK"},
			map[string]any{"action": "ask"}, ""},
		{"empty description stays an empty string", map[string]any{"description": ""},
			map[string]any{"description": ""}, ""},
		{"rename", map[string]any{"id": "r-2", "pattern": "ls *"},
			map[string]any{"id": "r-2", "pattern": "ls *"}, "r-2"},
	}
	for _, c := range cases {
		p := DecodeRulePatch(c.body)
		if got := p.Map(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Map() = %v, want %v", c.note, got, c.want)
		}
		id, ok := p.NewID()
		if ok != (c.newID != "") || id != c.newID {
			t.Errorf("%s: NewID() = %q, %v, want %q", c.note, id, ok, c.newID)
		}
	}
}

func TestReplaceFieldsRemovesClearedFields(t *testing.T) {
	p := DecodeRulePatch(map[string]any{"id": "r", "tools": []any{"bash"}, "pattern": "", "action": "allow"})
	got := ReplaceFields(p.Rule, "id", "tools", "pattern", "action", "severity", "description").Map()
	want := map[string]any{"id": "r", "tools": []any{"bash"}, "pattern": "", "action": "allow", "severity": nil, "description": nil}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestDecodeRuleInputs(t *testing.T) {
	noCheck := func(string) error { return nil }
	cases := []struct {
		note    string
		body    map[string]any
		partial bool
		field   string // the refused field, "" when accepted
		want    map[string]any
	}{
		{"a whole rule decodes", map[string]any{"id": "r", "tools": "bash", "pattern": "ls", "action": "ASK"}, false, "",
			map[string]any{"id": "r", "tools": []any{"bash"}, "pattern": "ls", "action": "ask"}},
		{"a whole rule needs its pattern", map[string]any{"id": "r", "tools": []any{"bash"}, "action": "ask"}, false, "pattern", nil},
		{"an unknown field is refused", map[string]any{"id": "r", "tool": "bash"}, true, "tool", nil},
		{"a patch removes with null", map[string]any{"severity": nil, "action": "deny"}, true, "",
			map[string]any{"severity": nil, "action": "deny"}},
		{"a patch may not null the pattern", map[string]any{"pattern": nil}, true, "pattern", nil},
	}
	for _, c := range cases {
		var got map[string]any
		var fe *FieldError
		if c.partial {
			var p RulePatch
			p, fe = DecodeRulePatchInput("", c.body, noCheck)
			got = p.Map()
		} else {
			var r Rule
			r, fe = DecodeRuleInput("", c.body, noCheck)
			got = r.Map()
		}
		switch {
		case c.field != "":
			if fe == nil || fe.Field != c.field {
				t.Errorf("%s: got %v, want a refusal of %q", c.note, fe, c.field)
			}
		case fe != nil:
			t.Errorf("%s: refused: %v", c.note, fe)
		case !reflect.DeepEqual(got, c.want):
			t.Errorf("%s: got %v, want %v", c.note, got, c.want)
		}
	}
}
