package store

import (
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

// TestSettingChangesWriteWhatTheMappingDid: the nodes of a settings patch
// are the patch's mapping as toNode wrote it, in the same key order.
func TestSettingChangesWriteWhatTheMappingDid(t *testing.T) {
	on, mode, msg := false, "strict", "line1\nline2"
	p := policy.SettingsPatch{Enabled: &on, PermissionMode: &mode, DenyGuidanceMessage: &msg,
		Defaults: map[string]string{"*": "ask", "bash": "deny"}, Remove: []string{"schema", "version"}}
	m := normalizeMap(p.Map())
	changes := settingChanges(p)
	keys := orderedKeys(m)
	if len(changes) != len(keys) {
		t.Fatalf("changes %d keys, mapping %d", len(changes), len(keys))
	}
	for i, c := range changes {
		if c.key != keys[i] {
			t.Errorf("key %d: %s, want %s", i, c.key, keys[i])
		}
		if c.node == nil {
			if m[c.key] != nil {
				t.Errorf("%s removed, mapping has %v", c.key, m[c.key])
			}
			continue
		}
		sameText(t, c.key, c.node, m[c.key])
	}
}

// TestPatchChangesWriteWhatTheMappingDid: a rule patch's nodes are
// RulePatch.Map as toNode wrote it, in the same key order; a field set to
// "" is written "", a removed one is removed.
func TestPatchChangesWriteWhatTheMappingDid(t *testing.T) {
	patches := []struct {
		note  string
		patch policy.RulePatch
	}{
		{"set and remove", policy.DecodeRulePatch(map[string]any{"action": nil, "severity": "HIGH", "description": "secrets need a look", "tools": []any{"bash", "sh"}})},
		{"a field set to empty", policy.RulePatch{Rule: policy.Rule{ID: "n"}, Set: []string{"description", "id", "examples"}}},
		{"set and removed", policy.RulePatch{Rule: policy.Rule{Pattern: "p", Extra: map[string]any{"approved_by": "ann"}}, Set: []string{"pattern", "approved_by"}, Remove: []string{"pattern"}}},
	}
	for _, c := range patches {
		m := normalizeMap(c.patch.Map())
		changes, err := patchChanges(&c.patch)
		if err != nil {
			t.Fatal(err)
		}
		keys := orderedKeys(m)
		if len(changes) != len(keys) {
			t.Fatalf("%s: changes %d keys, mapping %d", c.note, len(changes), len(keys))
		}
		for i, ch := range changes {
			if ch.key != keys[i] {
				t.Errorf("%s: key %d: %s, want %s", c.note, i, ch.key, keys[i])
			}
			if ch.node == nil {
				if m[ch.key] != nil {
					t.Errorf("%s: %s removed, mapping has %v", c.note, ch.key, m[ch.key])
				}
				continue
			}
			n, _ := fieldNode(ch.key, m[ch.key])
			want, _ := encodeNode(n, 2)
			got, _ := encodeNode(ch.node, 2)
			if string(got) != string(want) {
				t.Errorf("%s: %s writes\n%s\nwant\n%s", c.note, ch.key, got, want)
			}
		}
	}
}
