package policy

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestDecodeJSON(t *testing.T) {
	cases := []struct {
		note     string
		body     string
		err      error // nil, ErrNotObject, or errAny for a JSON error
		problems int
	}{
		{"an object", `{"schema": "tiered_policy", "tools": {"bash": "ask"}}`, nil, 0},
		{"problems are not errors", `{"tools": {"bash": "maybe"}, "x": 1}`, nil, 2},
		{"an array", `[1]`, ErrNotObject, 0},
		{"a string", `"x"`, ErrNotObject, 0},
		{"null", `null`, ErrNotObject, 0},
		{"not JSON", `{`, errAny, 0},
	}
	for _, c := range cases {
		s, err := DecodeJSON([]byte(c.body))
		switch {
		case c.err == errAny && err == nil, c.err != errAny && !errors.Is(err, c.err):
			t.Errorf("%s: error %v, want %v", c.note, err, c.err)
		case err == nil && len(s.Problems) != c.problems:
			t.Errorf("%s: got problems %v, want %d", c.note, s.Problems, c.problems)
		}
	}
}

var errAny = errors.New("any error")

func TestDecodeNode(t *testing.T) {
	cases := []struct {
		note   string
		src    string
		err    error
		tiered bool
	}{
		{"a mapping", "schema: tiered_policy\nrules: []\n", nil, true},
		{"null is the absent section", "~\n", nil, false},
		{"a list", "- a\n", ErrNotObject, false},
	}
	for _, c := range cases {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(c.src), &doc); err != nil {
			t.Fatalf("%s: %v", c.note, err)
		}
		s, err := DecodeNode(&doc)
		if !errors.Is(err, c.err) || err == nil && s.Tiered != c.tiered {
			t.Errorf("%s: got %v tiered %v, want %v tiered %v", c.note, err, s.Tiered, c.err, c.tiered)
		}
	}
	if s, err := DecodeNode(nil); err != nil || !s.Enabled {
		t.Errorf("nil node: got %+v, %v", s, err)
	}
	if ps := Validate(map[string]any{"enabled": "yes"}); len(ps) != 1 || ps[0].Path != "permissions.enabled" {
		t.Errorf("Validate: got %v", ps)
	}
}

func TestSectionJSON(t *testing.T) {
	in := `{"schema":"tiered_policy","rules":[{"id":"r1","tools":["bash"],"pattern":"rm *","action":"deny"}],"external_directory":{"*":"deny"}}`
	var s Section
	if err := json.Unmarshal([]byte(in), &s); err != nil || len(s.Problems) != 0 {
		t.Fatalf("unmarshal: %v %v", err, s.Problems)
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Section
	if err := json.Unmarshal(out, &back); err != nil || !reflect.DeepEqual(back, s) {
		t.Errorf("round trip through %s: got %#v, %v", out, back, err)
	}
	r, _ := json.Marshal(s.Rules[0])
	if string(r) != `{"action":"deny","id":"r1","pattern":"rm *","tools":["bash"]}` {
		t.Errorf("rule JSON: got %s", r)
	}
	if err := json.Unmarshal([]byte(`[1]`), &s); !errors.Is(err, ErrNotObject) {
		t.Errorf("an array: got %v, want ErrNotObject", err)
	}
}

// TestRuleJSONRoundTrip: a rule read from JSON writes back the same bytes,
// keys it does not know and a rule with problems included, as the
// persisted rule of an answered ask is stored and read back.
func TestRuleJSONRoundTrip(t *testing.T) {
	for _, c := range []struct{ note, in string }{
		{"an always-allow override with who and when", `{"action":"allow","approved_by":"ann","created_at":"2026-12-04T21:00:00Z","id":"user_allow_bash_command_make_deploy","match_type":"command","pattern":"make deploy","source":"user_approval","tools":["bash"]}`},
		{"an unknown key is kept", `{"id":"user_allow_bash","pattern":"mysql *","tool":"bash"}`},
		{"a bad action is kept as written", `{"action":"maybe","pattern":"x","tools":["bash"]}`},
	} {
		var r Rule
		if err := json.Unmarshal([]byte(c.in), &r); err != nil {
			t.Fatalf("%s: %v", c.note, err)
		}
		out, err := json.Marshal(&r)
		if err != nil || string(out) != c.in {
			t.Errorf("%s: wrote %s (err %v), want %s", c.note, out, err, c.in)
		}
	}
	var r Rule
	if err := json.Unmarshal([]byte(`["bash"]`), &r); err == nil {
		t.Error("a list read as a rule")
	}
}
