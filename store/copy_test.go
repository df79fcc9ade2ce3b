package store

import (
	"encoding/json"
	"testing"
)

// TestSectionAndBuiltinAreCopies checks that what Section and BuiltinRules
// return may be changed, to the deepest list, without changing the policy
// in force: the state is shared by every reader.
func TestSectionAndBuiltinAreCopies(t *testing.T) {
	s, _ := openFixture(t, "config.yaml")
	sec, etag, err := s.Section()
	if err != nil || sec == nil {
		t.Fatalf("Section: %v, %v", sec, err)
	}
	before := jsonText(t, sec)
	spoil := func(v any) {
		var walk func(v any)
		walk = func(v any) {
			switch t := v.(type) {
			case map[string]any:
				for k, e := range t {
					walk(e)
					t[k] = "spoiled"
				}
				t["added"] = true
			case []any:
				for i, e := range t {
					walk(e)
					t[i] = "spoiled"
				}
			}
		}
		walk(v)
	}
	first, _, _ := s.Section()
	spoil(first)
	again, etag2, _ := s.Section()
	if jsonText(t, again) != before || etag != etag2 {
		t.Fatal("changing Section's map changed the section in force")
	}
	rules, _ := s.BuiltinRules()
	if len(rules) == 0 {
		t.Fatal("no built-in rules")
	}
	want := jsonText(t, rules)
	spoil(rules)
	if got, _ := s.BuiltinRules(); jsonText(t, got) != want {
		t.Fatal("changing BuiltinRules' list changed the rules in force")
	}
}

// jsonText is v as JSON, a snapshot that later changes to v do not touch.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
