package policy

import "testing"

func TestLookups(t *testing.T) {
	s := DecodeSection(sectionOf(t, `
tools: {bash: ask, read_file: {"*": allow}}
rules: [{id: a, tools: [bash], pattern: x, action: ask}, {id: b, tools: [bash], pattern: y, action: deny}, {id: a, tools: [bash], pattern: z, action: allow}]
external_directory: {"*": deny, /tmp: allow}
owner_scopes: {feishu: {ou_1: {defaults: {"*": deny}}}}
`))
	cases := []struct {
		note      string
		got, want any
	}{
		{"first rule with the id", func() any { r, _ := RuleByID(s.Rules, "a"); return r.Pattern }(), "x"},
		{"no such rule", func() any { _, ok := RuleByID(s.Rules, "zz"); return ok }(), false},
		{"tool level", func() any { tl, _ := s.Tool("bash"); return tl.Level }(), Ask},
		{"tool star", func() any { tl, _ := s.Tool("read_file"); return tl.Star }(), true},
		{"no such tool", func() any { _, ok := s.Tool("grep"); return ok }(), false},
		{"external key", func() any { l, _ := s.External.Key("/tmp"); return l }(), Allow},
		{"external star", func() any { l, _ := s.External.Key("*"); return l }(), Deny},
		{"no such key", func() any { _, ok := s.External.Key("/etc"); return ok }(), false},
		{"owner scope", func() any { sc, _ := s.Owners.Scope("feishu", "ou_1"); return sc.Defaults }(), Deny},
		{"no such scope", func() any { _, ok := s.Owners.Scope("feishu", "ou_2"); return ok }(), false},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.note, c.got, c.want)
		}
	}
}
