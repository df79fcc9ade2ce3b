package policy

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// sectionOf decodes a YAML permissions section as store reads it.
func sectionOf(t *testing.T, src string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(src), &m); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	return m
}

// hasProblem reports whether ps has a problem at path whose message holds frag.
func hasProblem(ps []Problem, path, frag string) bool {
	for _, p := range ps {
		if p.Path == path && strings.Contains(p.Message, frag) {
			return true
		}
	}
	return false
}

func TestDecodeSectionProblems(t *testing.T) {
	cases := []struct {
		note, src  string
		path, frag string
	}{
		{"enabled not a boolean", `enabled: "no"`, "permissions.enabled", "must be true or false, got no"},
		{"unknown mode", `permission_mode: lax`, "permissions.permission_mode", `unknown mode "lax"`},
		{"unknown key, quoted when not a plain word", `"my key": 1`, `permissions."my key"`, "unknown key; it is ignored"},
		{"tools not a mapping", `tools: [bash]`, "permissions.tools", "must be a mapping of tool name to level"},
		{"tool level invalid", `tools: {bash: maybe}`, "permissions.tools.bash", `invalid level "maybe"`},
		{"tool star invalid", `tools: {bash: {"*": 3}}`, `permissions.tools.bash."*"`, "invalid level 3"},
		{"tool level empty", `tools: {bash: }`, "permissions.tools.bash", "invalid level (empty)"},
		{"legacy patterns not a mapping", `tools: {bash: {patterns: [x]}}`, "permissions.tools.bash.patterns", "must be a mapping of pattern to level"},
		{"legacy pattern level", `tools: {bash: {patterns: {"rm *": nope}}}`, `permissions.tools.bash.patterns["rm *"]`, `invalid level "nope"`},
		{"defaults not a mapping", `defaults: ask`, "permissions.defaults", `must be a mapping like {"*": ask}`},
		{"defaults level", `defaults: {"*": no}`, `permissions.defaults."*"`, "invalid level"},
		{"rules not a list", `rules: {a: 1}`, "permissions.rules", "must be a list of rules"},
		{"rule not a mapping", `rules: [x]`, "permissions.rules[0]", "must be a mapping with tools and pattern"},
		{"rule tools missing", `rules: [{pattern: x, action: ask}]`, "permissions.rules[0].tools", "must list at least one tool"},
		{"rule tools empty list", `rules: [{tools: [], pattern: x}]`, "permissions.rules[0].tools", "must list at least one tool"},
		{"rule tool not a string", `rules: [{tools: [bash, 3], pattern: x}]`, "permissions.rules[0].tools", "tool names must be strings, got 3"},
		{"rule action not a level", `rules: [{tools: [bash], pattern: x, action: block}]`, "permissions.rules[0].action", `invalid action "block"`},
		{"rule severity unknown", `rules: [{tools: [bash], pattern: x, severity: huge}]`, "permissions.rules[0].severity", `unknown severity "huge"; HIGH is used`},
		{"rule match_type unknown", `rules: [{tools: [bash], pattern: x, action: ask, match_type: url}]`, "permissions.rules[0].match_type", `unknown match_type "url"`},
		{"override index kept past a broken entry", `approval_overrides: [1, {tools: [bash], pattern: x, action: allow, match_type: 2}]`, "permissions.approval_overrides[1].match_type", `unknown match_type "2"`},
		{"external not a level or mapping", `external_directory: [a]`, "permissions.external_directory", "must be a level or a mapping"},
		{"external plain level invalid", `external_directory: sometimes`, "permissions.external_directory", `invalid level "sometimes"`},
		{"external key level", `external_directory: {/tmp: yes}`, `permissions.external_directory["/tmp"]`, `invalid level "yes"`},
		{"owner scopes not a mapping", `owner_scopes: [a]`, "permissions.owner_scopes", "must be a mapping of channel id"},
		{"owner channel not a mapping", `owner_scopes: {feishu: 1}`, "permissions.owner_scopes.feishu", "must be a mapping of principal user id"},
		{"owner earlier shape", `owner_scopes: {ou_1: {tools: {bash: allow}}}`, "permissions.owner_scopes.ou_1", "earlier shape"},
		{"owner scope not a mapping", `owner_scopes: {feishu: {ou_1: 3}}`, "permissions.owner_scopes.feishu.ou_1", "must be a mapping with tools and/or defaults"},
		{"owner level case matters", `owner_scopes: {feishu: {ou_1: {tools: {bash: Allow}}}}`, "permissions.owner_scopes.feishu.ou_1.tools.bash", `invalid owner-scope level "Allow"`},
		{"owner tool list", `owner_scopes: {feishu: {ou_1: {tools: {bash: [a]}}}}`, "permissions.owner_scopes.feishu.ou_1.tools.bash", "must be a level or a mapping with patterns"},
		{"owner pattern level", `owner_scopes: {feishu: {ou_1: {tools: {bash: {patterns: {"git *": 1}}}}}}`, `permissions.owner_scopes.feishu.ou_1.tools.bash.patterns["git *"]`, "invalid owner-scope level 1"},
		{"owner tool unknown key", `owner_scopes: {feishu: {ou_1: {tools: {bash: {extra: 1}}}}}`, "permissions.owner_scopes.feishu.ou_1.tools.bash.extra", "unknown key"},
		{"owner defaults other key", `owner_scopes: {feishu: {ou_1: {defaults: {bash: deny}}}}`, "permissions.owner_scopes.feishu.ou_1.defaults.bash", `only "*" is read`},
		{"owner scope unknown key", `owner_scopes: {feishu: {ou_1: {rules: []}}}`, "permissions.owner_scopes.feishu.ou_1.rules", "allowed: tools, defaults"},
		{"owner channel with a dot is quoted", `owner_scopes: {"a.b": {ou_1: 3}}`, `permissions.owner_scopes."a.b".ou_1`, "must be a mapping"},
		{"guidance not a string", `deny_guidance_message: [a]`, "permissions.deny_guidance_message", "must be a string"},
	}
	for _, c := range cases {
		s := DecodeSection(sectionOf(t, c.src))
		if !hasProblem(s.Problems, c.path, c.frag) {
			t.Errorf("%s: got %v, want a problem at %s containing %q", c.note, s.Problems, c.path, c.frag)
		}
	}
}

func TestDecodeSectionValues(t *testing.T) {
	s := DecodeSection(sectionOf(t, `
enabled: "off"
version: " V4.2"
permission_mode: STRICT
tools: {bash: Ask, read_file: {"*": allow}, edit: {patterns: {"*.go": deny}}}
defaults: {"*": deny}
rules:
  - {id: 7, tools: bash, pattern: "rm *", severity: low}
  - {id: r2, tools: [read_file], pattern: /etc, action: "", severity: critical, approved_by: ann}
approval_overrides:
  - {id: o1, tools: [bash], pattern: ls, action: bogus}
external_directory: {"*": deny, /tmp: allow}
owner_scopes: {feishu: {ou_1: {tools: {bash: {"*": ask, patterns: {"git *": allow}}, grep: deny}, defaults: {"*": deny}}}}
deny_guidance_message: "  ask Ann  "
`))
	checks := []struct {
		note      string
		got, want any
	}{
		{"enabled off as text", s.Enabled, false},
		{"version read as the schema", s.SchemaKey + "=" + s.Schema, "version= V4.2"},
		{"tiered by version V4.2, spaced", s.Tiered, true},
		{"mode in any case", s.Mode, ModeStrict},
		{"tool level in any case", s.Tools[0], ToolSetting{Name: "bash", Level: Ask}},
		{"tool patterns not read when tiered", s.Tools[1], ToolSetting{Name: "edit"}},
		{"tool star", s.Tools[2], ToolSetting{Name: "read_file", Level: Allow, Star: true}},
		{"defaults", s.Defaults, Deny},
		{"numeric id as text", s.Rules[0].ID, "7"},
		{"one tool as a string", s.Rules[0].Tools, []string{"bash"}},
		{"severity by name", s.Rules[0].Severity, SeverityLow},
		{"empty action is absent", s.Rules[1].Action, LevelNone},
		{"severity decides without action", s.Rules[1].Severity, SeverityCritical},
		{"other keys kept", s.Rules[1].Extra, map[string]any{"approved_by": "ann"}},
		{"bad action kept, inert", s.Overrides[0].BadAction + "/" + boolText(s.Overrides[0].Inert()), "bogus/true"},
		{"external star", s.External.Star, Deny},
		{"external key", s.External.Keys, []ExternalKey{{Key: "/tmp", Level: Allow}}},
		{"owner tools sorted", s.Owners.Channels[0].Principals[0].Tools[0].Tool, "bash"},
		{"owner patterns", s.Owners.Channels[0].Principals[0].Tools[0].Patterns, []LegacyPattern{{Pattern: "git *", Level: Allow}}},
		{"owner defaults", s.Owners.Channels[0].Principals[0].Defaults, Deny},
		{"guidance trimmed", s.DenyGuidance, "ask Ann"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.note, c.got, c.want)
		}
	}
	lvl, ok := s.Rules[1].Level(ModeNormal)
	if lvl != Ask || !ok {
		t.Errorf("critical in normal mode: got %v %v, want ask", lvl, ok)
	}
	if _, ok := s.Overrides[0].Level(ModeNormal); ok {
		t.Errorf("a rule with a bad action must be inert")
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestDecodeSectionHostile: wrong types everywhere, map[any]any, a huge
// list and unknown keys decode without panicking, each reported.
func TestDecodeSectionHostile(t *testing.T) {
	huge := make([]any, 100000)
	for i := range huge {
		huge[i] = i
	}
	cases := []struct {
		note     string
		perms    map[string]any
		problems int
	}{
		{"nil section is the default", nil, 0},
		{"every key of the wrong type", map[string]any{
			"enabled": []any{}, "schema": map[string]any{}, "permission_mode": []any{}, "tools": 5,
			"defaults": "x", "rules": "x", "approval_overrides": 3, "external_directory": true,
			"owner_scopes": "x", "deny_guidance_message": 1,
		}, 9}, // schema is free text: a mapping only makes it not tiered
		{"map[any]any from an older YAML decoder", map[string]any{
			"tools": map[any]any{"bash": "ask", 3: "nope"},
		}, 1},
		{"a huge list of junk entries", map[string]any{"rules": huge}, 100000},
		{"unknown keys", map[string]any{"a": 1, "b": nil, "": 2}, 3},
	}
	for _, c := range cases {
		s := DecodeSection(c.perms)
		if len(s.Problems) != c.problems {
			t.Errorf("%s: got %d problems, want %d (first: %v)", c.note, len(s.Problems), c.problems, first(s.Problems))
		}
	}
	s := DecodeSection(nil)
	if !s.Enabled || s.External.Star != Ask || s.Mode != ModeNormal {
		t.Errorf("default section: got %+v", s)
	}
}

func first(ps []Problem) any {
	if len(ps) == 0 {
		return nil
	}
	return ps[0]
}

func TestDecodeBuiltin(t *testing.T) {
	b := DecodeBuiltin([]any{"x", map[string]any{"id": "b1", "tools": []any{"bash"}, "pattern": "rm *", "severity": "HIGH"}})
	if len(b.Rules) != 1 || b.Rules[0].Index != 1 || b.Rules[0].ID != "b1" {
		t.Errorf("rules: got %+v, want b1 at index 1", b.Rules)
	}
	if !hasProblem(b.Problems, "builtin_rules[0]", "must be a mapping") {
		t.Errorf("problems: got %v", b.Problems)
	}
}

// TestSectionRoundTrip: a section without problems encodes (Map) to a
// mapping that decodes to the same section.
func TestSectionRoundTrip(t *testing.T) {
	srcs := []struct{ note, src string }{
		{"empty", ``},
		{"tiered with everything", `
schema: tiered_policy
permission_mode: strict
tools: {bash: ask, read_file: {"*": allow}}
defaults: {"*": ask}
rules: [{id: r1, tools: [bash], pattern: "rm *", action: deny, match_type: command, description: no rm}]
approval_overrides: [{id: o1, tools: [bash], pattern: ls, action: allow, source: user_approval, approved_by: ann}]
external_directory: {"*": deny, /tmp: allow}
owner_scopes: {feishu: {ou_1: {tools: {bash: {"*": ask, patterns: {"git *": allow}}, grep: deny}, defaults: {"*": deny}}}}
deny_guidance_message: ask Ann
`},
		{"legacy patterns", `tools: {bash: {patterns: {"rm *": deny}, "*": ask}}`},
		{"fixed external level", `external_directory: allow`},
	}
	for _, c := range srcs {
		s := DecodeSection(sectionOf(t, c.src))
		if len(s.Problems) != 0 {
			t.Fatalf("%s: problems %v", c.note, s.Problems)
		}
		back := DecodeSection(s.Map())
		if !reflect.DeepEqual(back, s) {
			t.Errorf("%s: round trip\n got %#v\nwant %#v", c.note, back, s)
		}
	}
}
