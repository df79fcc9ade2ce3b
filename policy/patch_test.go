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
