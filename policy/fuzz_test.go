package policy

import (
	"encoding/json"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

// FuzzPolicyDecode: decoding any YAML or JSON document never panics, and a
// section decoded without problems encodes (Map) to a mapping that decodes
// to the same section.
func FuzzPolicyDecode(f *testing.F) {
	seeds := []string{
		``, `enabled: false`, `schema: tiered_policy
rules: [{id: r1, tools: [bash], pattern: "rm *", action: deny}]`,
		`tools: {bash: {patterns: {"rm *": deny}, "*": ask}}`,
		`external_directory: {"*": deny, /tmp: allow}`,
		`owner_scopes: {feishu: {ou_1: {tools: {bash: {"*": ask, patterns: {"git *": allow}}}, defaults: {"*": deny}}}}`,
		`{"rules": [{"tools": "bash", "pattern": "x", "severity": "low", "approved_by": "a"}]}`,
		`approval_overrides: [1, {tools: [], pattern: x}]`,
		`{"tools": [], "rules": {}, "owner_scopes": {"a": {"tools": {"x": 1}}}}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var m map[string]any
		if yaml.Unmarshal([]byte(src), &m) != nil {
			if json.Unmarshal([]byte(src), &m) != nil {
				return
			}
		}
		s := DecodeSection(m)
		if list, ok := m["rules"].([]any); ok {
			_ = DecodeBuiltin(list)
		}
		if len(s.Problems) != 0 {
			return
		}
		back := DecodeSection(s.Map())
		if !reflect.DeepEqual(back, s) {
			t.Fatalf("round trip changed the section\n got %#v\nwant %#v", back, s)
		}
	})
}

// FuzzRuleJSON: reading any JSON as a rule never panics, and a rule read
// once writes JSON that reads back to the same JSON: the persisted rule of
// an answered ask is stored and read again many times, and must not drift.
func FuzzRuleJSON(f *testing.F) {
	for _, s := range []string{
		`{"action":"allow","approved_by":"ann","id":"user_allow_bash_command_make","match_type":"command","pattern":"make","source":"user_approval","tools":["bash"]}`,
		`{"id":"x","tool":"bash","pattern":5}`, `{"tools":"bash","action":"ALLOW","severity":"low"}`,
		`{"examples":{"match":["a"],"no_match":[]},"mode":"shadow","pattern":"a *","tools":["bash"]}`,
		`{}`, `[]`, `null`, `{"pattern":null,"tools":[1,"x"]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var r Rule
		if json.Unmarshal([]byte(src), &r) != nil {
			return
		}
		once, err := json.Marshal(&r)
		if err != nil {
			t.Fatalf("write %q: %v", src, err)
		}
		var again Rule
		if err := json.Unmarshal(once, &again); err != nil {
			t.Fatalf("read back %s: %v", once, err)
		}
		twice, err := json.Marshal(&again)
		if err != nil || string(twice) != string(once) {
			t.Fatalf("%q wrote %s, which wrote %s (err %v)", src, once, twice, err)
		}
	})
}
