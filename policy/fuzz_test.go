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
