package store

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/policy"
)

// sameText encodes both nodes and reports a difference: the typed writers
// must give the bytes toNode gives of the value's decoded mapping.
func sameText(t *testing.T, note string, typed *yaml.Node, viaMap any) {
	t.Helper()
	want, err := toNode(viaMap)
	if err != nil {
		t.Fatalf("%s: toNode: %v", note, err)
	}
	wantText, err := encodeNode(want, 2)
	if err != nil {
		t.Fatal(err)
	}
	gotText, err := encodeNode(typed, 2)
	if err != nil {
		t.Fatal(err)
	}
	if string(gotText) != string(wantText) {
		t.Errorf("%s: typed node writes\n%s\nthe mapping writes\n%s", note, gotText, wantText)
	}
}

// TestRuleNodeWritesWhatTheMappingDid: ruleNode writes every rule as
// toNode wrote Rule.Map, including odd strings, inert actions, unknown
// severities, examples and extra keys of any shape.
func TestRuleNodeWritesWhatTheMappingDid(t *testing.T) {
	rules := []struct {
		note string
		rule policy.Rule
	}{
		{"plain", policy.Rule{ID: "r1", Tools: []string{"bash"}, Pattern: "ls *", Action: policy.Allow}},
		{"no id, empty pattern, no tools", policy.Rule{Severity: policy.SeverityHigh}},
		{"empty tools list", policy.Rule{ID: "r", Tools: []string{}, Pattern: "x", Action: policy.Deny}},
		{"strings that read as other types", policy.Rule{ID: "123", Tools: []string{"true", "null", "*"}, Pattern: "yes", MatchType: "command",
			Action: policy.Ask, Description: "~", Source: "1.5"}},
		{"strings a plain scalar cannot hold", policy.Rule{ID: " padded ", Tools: []string{"a: b", "#c"}, Pattern: "line1\nline2",
			Description: "\nleading newline", Source: "tab\there", Action: policy.Allow}},
		{"inert action, unknown severity", policy.Rule{ID: "x", Tools: []string{"bash"}, Pattern: "p", BadAction: "maybe",
			Severity: policy.SeverityHigh, BadSeverity: "huge"}},
		{"severity only, shadow", policy.Rule{ID: "s", Tools: []string{"read_file", "write_file"}, Pattern: "re:^/etc", MatchType: "path",
			Severity: policy.SeverityCritical, Mode: policy.RuleModeShadow}},
		{"examples", policy.Rule{ID: "e", Tools: []string{"bash"}, Pattern: "git *", Action: policy.Allow,
			Examples: &policy.Examples{Match: []string{"git status", "git log"}, NoMatch: []string{"gitk"}}}},
		{"empty examples", policy.Rule{ID: "e", Tools: []string{"bash"}, Pattern: "p", Action: policy.Allow, Examples: &policy.Examples{}}},
		{"extra keys of every shape", policy.Rule{ID: "o", Tools: []string{"bash"}, Pattern: "p", Action: policy.Allow, Source: policy.SourceUserApproval,
			Extra: map[string]any{"approved_by": "ann", "created_at": "2026-12-04T21:00:00Z", "count": 3, "ratio": 0.5, "on": true, "none": nil,
				"nested": map[string]any{"tools": []any{"a", "b"}, "*": "x", "deep": map[any]any{1: "one"}},
				"list":   []any{map[string]any{"k": "v"}, "s"}, "zzz": "last", "aaa": "first"}}},
		{"an extra key named like an unset field", policy.Rule{ID: "d", Tools: []string{"bash"}, Pattern: "p", Action: policy.Allow,
			Extra: map[string]any{"description": "from extra", "tools_note": []any{"x"}}}},
		{"an extra key shadowed by a set field", policy.Rule{ID: "d", Tools: []string{"bash"}, Pattern: "p", Action: policy.Allow,
			Description: "field", Extra: map[string]any{"description": "from extra"}}},
	}
	for _, c := range rules {
		n, err := ruleNode(&c.rule)
		if err != nil {
			t.Fatalf("%s: %v", c.note, err)
		}
		sameText(t, c.note, n, c.rule.Map())
	}
}

// TestRuleNodeOfTheFixtures: every rule and override of the fixtures,
// decoded, writes as its mapping did.
func TestRuleNodeOfTheFixtures(t *testing.T) {
	for _, f := range []string{"config.yaml", "legacy.yaml"} {
		sec, _, err := decodeSection(readFile(t, "testdata/"+f))
		if err != nil {
			t.Fatal(err)
		}
		s := policy.DecodeSection(sec)
		for _, list := range [][]policy.Rule{s.Rules, s.Overrides} {
			for i := range list {
				n, err := ruleNode(&list[i])
				if err != nil {
					t.Fatal(err)
				}
				sameText(t, f+" "+list[i].ID, n, list[i].Map())
			}
		}
	}
}

// TestOwnerScopesNodeWritesWhatTheMappingDid covers plain levels, "*" with
// patterns, empty scopes and a principal named twice.
func TestOwnerScopesNodeWritesWhatTheMappingDid(t *testing.T) {
	scopes := policy.OwnerScopes{Configured: true, Channels: []policy.OwnerChannel{
		{Channel: "feishu", Principals: []policy.OwnerScope{
			{Principal: "ou_1", Tools: []policy.OwnerTool{
				{Tool: "bash", Level: policy.Deny, Star: true, Patterns: []policy.LegacyPattern{{Pattern: "git *", Level: policy.Allow}, {Pattern: "true", Level: policy.Ask}}},
				{Tool: "read_file", Level: policy.Allow},
				{Tool: "grep", Patterns: []policy.LegacyPattern{}},
				{Tool: "none"},
			}, Defaults: policy.Ask},
			{Principal: "ou_2"},
			{Principal: "ou_1", Tools: []policy.OwnerTool{}, Defaults: policy.Deny},
		}},
		{Channel: "*"},
		{Channel: "123", Principals: []policy.OwnerScope{{Principal: "yes", Defaults: policy.Allow}}},
	}}
	sameText(t, "owner scopes", ownerScopesNode(&scopes), scopes.Map())
}

// changesText renders changes as "key: value" ("-key" for a removal),
// joined with "; ".
func changesText(t *testing.T, changes []keyed) string {
	t.Helper()
	var parts []string
	for _, c := range changes {
		if c.node == nil {
			parts = append(parts, "-"+c.key)
			continue
		}
		b, err := encodeNode(c.node, 2)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, c.key+": "+strings.TrimSpace(string(b)))
	}
	return strings.Join(parts, "; ")
}

// TestSettingChanges: a settings patch writes its keys in orderedKeys
// order, values as the edits have always written them, a removal winning.
func TestSettingChanges(t *testing.T) {
	on, mode, msg, schema := false, "strict", "line1\nline2", "tiered_policy"
	cases := []struct {
		note  string
		patch policy.SettingsPatch
		want  string
	}{
		{"set and remove", policy.SettingsPatch{Enabled: &on, PermissionMode: &mode, DenyGuidanceMessage: &msg,
			Defaults: map[string]string{"*": "ASK", "bash": "deny"}, Remove: []string{"version", "schema"}},
			`enabled: false; -schema; -version; permission_mode: strict; defaults: "*": ASK` + "\n" + `bash: deny; deny_guidance_message: "line1\nline2"`},
		{"a key both set and removed is removed; an unknown removal is kept for its refusal", policy.SettingsPatch{Schema: &schema, Remove: []string{"schema", "colour"}},
			"-schema; -colour"},
	}
	for _, c := range cases {
		if got := changesText(t, settingChanges(c.patch)); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.note, got, c.want)
		}
	}
}

// TestPatchChanges: a rule patch writes the fields it sets as Rule.Map
// renders them (a field set to "" is written ""), in orderedKeys order; a
// removal wins over a set.
func TestPatchChanges(t *testing.T) {
	cases := []struct {
		note  string
		patch policy.RulePatch
		want  string
	}{
		{"set and remove", policy.DecodeRulePatch(map[string]any{"action": nil, "severity": "HIGH", "description": "secrets need a look", "tools": []any{"bash", "sh"}}),
			"tools: [bash, sh]; -action; severity: HIGH; description: secrets need a look"},
		{"a field set to empty", policy.RulePatch{Rule: policy.Rule{ID: "r2"}, Set: []string{"description", "id", "examples"}},
			`id: r2; description: ""; examples: ""`},
		{"set and removed; an extra key", policy.RulePatch{Rule: policy.Rule{Pattern: "p", Extra: map[string]any{"approved_by": "ann"}},
			Set: []string{"pattern", "approved_by"}, Remove: []string{"pattern"}},
			"-pattern; approved_by: ann"},
		{"a level in any case is written by name", policy.DecodeRulePatch(map[string]any{"action": "ASK", "tools": "bash"}),
			"tools: [bash]; action: ask"},
	}
	for _, c := range cases {
		changes, err := patchChanges(&c.patch)
		if err != nil {
			t.Fatal(err)
		}
		if got := changesText(t, changes); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.note, got, c.want)
		}
	}
}
