package policy

// RulePatch is a checked change to one rule: the fields named in Set take
// their values from Rule, the fields named in Remove are removed, the
// others stay as they are. Handlers build it at the edge (DecodeRulePatch
// for a request body, ReplaceFields for a form); the store applies it to
// the rule's YAML node.
type RulePatch struct {
	Rule   Rule
	Set    []string
	Remove []string
}

// DecodeRulePatch reads a PATCH body that CheckRuleInput (partial)
// accepted: a key with null is removed, every other key is set.
func DecodeRulePatch(m Mapping) RulePatch {
	var p RulePatch
	set := make(map[string]any, len(m.Keys))
	p.Remove = patchKeys(m, RuleFields[:], func(k string, v any) {
		p.Set = append(p.Set, k)
		set[k] = v
	})
	p.Rule, _, _ = DecodeRule(set, "rule")
	return p
}

// patchKeys reads a patch body: set gets each of keys given a value, in
// the order of keys, and the keys given null (to remove) are returned.
func patchKeys(m Mapping, keys []string, set func(key string, v any)) (remove []string) {
	for _, k := range keys {
		v, ok := m.Get(k)
		switch {
		case !ok:
		case v.v == nil:
			remove = append(remove, k)
		default:
			set(k, v.v)
		}
	}
	return remove
}

// ReplaceFields is the patch that makes each of fields what r has: a field
// r leaves empty is removed (a form's cleared field).
func ReplaceFields(r Rule, fields ...string) RulePatch {
	p := RulePatch{Rule: r}
	m := r.Map()
	for _, k := range fields {
		if _, ok := m[k]; ok {
			p.Set = append(p.Set, k)
		} else {
			p.Remove = append(p.Remove, k)
		}
	}
	return p
}

// NewID is the id the patch renames the rule to, if it does.
func (p RulePatch) NewID() (string, bool) {
	for _, k := range p.Set {
		if k == "id" {
			return p.Rule.ID, true
		}
	}
	return "", false
}

// DecodeRuleInput checks a new rule or approval override of a request
// (CheckRuleInput, all of it required) and decodes it: the one step from a
// request's object to the typed rule the edit ports take.
func DecodeRuleInput(field string, m Mapping, pattern PatternCheck) (Rule, *FieldError) {
	if fe := CheckRuleInput(field, m, false, pattern); fe != nil {
		return Rule{}, fe
	}
	r, _, _ := DecodeRule(m.Any(), "rule")
	return r, nil
}

// DecodeRulePatchInput checks a rule change of a request (CheckRuleInput,
// partial: null removes a field) and decodes it into a RulePatch.
func DecodeRulePatchInput(field string, m Mapping, pattern PatternCheck) (RulePatch, *FieldError) {
	if fe := CheckRuleInput(field, m, true, pattern); fe != nil {
		return RulePatch{}, fe
	}
	return DecodeRulePatch(m), nil
}
