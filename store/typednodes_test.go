package store

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

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
		{"set and remove", policy.DecodeRulePatch(policy.MappingOf(map[string]any{"action": nil, "severity": "HIGH", "description": "secrets need a look", "tools": []any{"bash", "sh"}})),
			"tools: [bash, sh]; -action; severity: HIGH; description: secrets need a look"},
		{"a field set to empty", policy.RulePatch{Rule: policy.Rule{ID: "r2"}, Set: []string{"description", "id", "examples"}},
			`id: r2; description: ""; examples: ""`},
		{"set and removed; an extra key", policy.RulePatch{Rule: policy.Rule{Pattern: "p", Extra: map[string]any{"approved_by": "ann"}},
			Set: []string{"pattern", "approved_by"}, Remove: []string{"pattern"}},
			"-pattern; approved_by: ann"},
		{"a level in any case is written by name", policy.DecodeRulePatch(policy.MappingOf(map[string]any{"action": "ASK", "tools": "bash"})),
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
