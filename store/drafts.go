package store

import "maps"

// DraftWithRule returns a shallow copy of a permissions section whose rules
// have rule in the place of the rule with the id, or appended when no rule
// has it: the draft of a one-rule change, for the impact preview.
func DraftWithRule(section map[string]any, id string, rule map[string]any) map[string]any {
	rules, _ := section["rules"].([]any)
	out := make([]any, 0, len(rules)+1)
	replaced := false
	for _, r := range rules {
		if ruleIDOf(r) == id {
			out = append(out, rule)
			replaced = true
			continue
		}
		out = append(out, r)
	}
	if !replaced {
		out = append(out, rule)
	}
	return withRules(section, out)
}

// DraftWithoutRule returns a shallow copy of a permissions section without
// the rules with the id, and whether there were any.
func DraftWithoutRule(section map[string]any, id string) (map[string]any, bool) {
	rules, _ := section["rules"].([]any)
	out := make([]any, 0, len(rules))
	for _, r := range rules {
		if ruleIDOf(r) != id {
			out = append(out, r)
		}
	}
	return withRules(section, out), len(out) < len(rules)
}

// withRules is a shallow copy of section with rules as its rules.
func withRules(section map[string]any, rules []any) map[string]any {
	draft := maps.Clone(section)
	if draft == nil {
		draft = map[string]any{}
	}
	draft["rules"] = rules
	return draft
}

func ruleIDOf(r any) string {
	m, _ := r.(map[string]any)
	id, _ := m["id"].(string)
	return id
}
