package policy

import (
	"reflect"
	"slices"
	"testing"
)

// samePatch compares two patches: the fields they set and remove, and
// the values of the set fields (as Rule.Map renders them).
func samePatch(a, b RulePatch) bool {
	if !slices.Equal(a.Set, b.Set) || !slices.Equal(a.Remove, b.Remove) {
		return false
	}
	am, bm := a.Rule.Map(), b.Rule.Map()
	for _, k := range a.Set {
		if !reflect.DeepEqual(am[k], bm[k]) {
			return false
		}
	}
	return true
}

func TestDecodeRulePatch(t *testing.T) {
	cases := []struct {
		note  string
		body  map[string]any
		want  RulePatch
		newID string
	}{
		{"set and remove", map[string]any{"action": "deny", "severity": nil},
			RulePatch{Rule: Rule{Action: Deny}, Set: []string{"action"}, Remove: []string{"severity"}}, ""},
		{"one tool name is a list", map[string]any{"tools": "bash"},
			RulePatch{Rule: Rule{Tools: []string{"bash"}}, Set: []string{"tools"}}, ""},
		{"level in any case is read by name", map[string]any{"action": "ASK"},
			RulePatch{Rule: Rule{Action: Ask}, Set: []string{"action"}}, ""},
		{"empty description is set, empty", map[string]any{"description": ""},
			RulePatch{Set: []string{"description"}}, ""},
		{"rename", map[string]any{"id": "r-2", "pattern": "ls *"},
			RulePatch{Rule: Rule{ID: "r-2", Pattern: "ls *"}, Set: []string{"id", "pattern"}}, "r-2"},
	}
	for _, c := range cases {
		p := DecodeRulePatch(MappingOf(c.body))
		if !samePatch(p, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.note, p, c.want)
		}
		id, ok := p.NewID()
		if ok != (c.newID != "") || id != c.newID {
			t.Errorf("%s: NewID() = %q, %v, want %q", c.note, id, ok, c.newID)
		}
	}
}

func TestReplaceFieldsRemovesClearedFields(t *testing.T) {
	p := DecodeRulePatch(MappingOf(map[string]any{"id": "r", "tools": []any{"bash"}, "pattern": "", "action": "allow"}))
	got := ReplaceFields(p.Rule, "id", "tools", "pattern", "action", "severity", "description")
	want := RulePatch{Rule: p.Rule, Set: []string{"id", "tools", "pattern", "action"}, Remove: []string{"severity", "description"}}
	if !samePatch(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
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
			map[string]any{"action": "deny", "-severity": nil}},
		{"a patch may not null the pattern", map[string]any{"pattern": nil}, true, "pattern", nil},
	}
	for _, c := range cases {
		var got map[string]any
		var fe *FieldError
		if c.partial {
			var p RulePatch
			p, fe = DecodeRulePatchInput("", MappingOf(c.body), noCheck)
			got = patchView(p)
		} else {
			var r Rule
			r, fe = DecodeRuleInput("", MappingOf(c.body), noCheck)
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

// patchView is what a patch changes: each set field as Rule.Map renders
// it, each removed one as "-<key>": nil.
func patchView(p RulePatch) map[string]any {
	full := p.Rule.Map()
	out := map[string]any{}
	for _, k := range p.Set {
		out[k] = full[k]
	}
	for _, k := range p.Remove {
		out["-"+k] = nil
	}
	return out
}
