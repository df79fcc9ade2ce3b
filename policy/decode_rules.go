package policy

import (
	"strconv"
	"strings"
)

func (d *decoder) ruleList(v any, path string) []Rule {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		d.problem(path, "must be a list of rules")
		return nil
	}
	return d.rules(list, path)
}

func (d *decoder) rules(list []any, path string) []Rule {
	out := make([]Rule, 0, len(list))
	for i, item := range list {
		// The path of a rule is only needed for a problem, so it is built
		// then (100,000 path strings were a visible share of compiling).
		rpath := func() string { return path + "[" + strconv.Itoa(i) + "]" }
		m, ok := asMap(item)
		if !ok {
			d.problem(rpath(), "must be a mapping with tools and pattern")
			continue
		}
		r := d.rule(m, rpath)
		r.Index = i
		out = append(out, r)
	}
	return out
}

// ruleValues are the values of one rule mapping, read in one pass over it
// (a 100,000-rule policy made ten lookups a rule a visible share of
// decoding).
type ruleValues [len(RuleFields)]any

// The places of RuleFields' keys, in its order.
const (
	fieldID = iota
	fieldTools
	fieldPattern
	fieldAction
	fieldSeverity
	fieldMatchType
	fieldDescription
	fieldSource
	fieldExamples
	fieldMode
)

// ruleField is the place of k in RuleFields, -1 when it is not a rule
// key. It runs once per key of every rule: a scan of ten short strings
// (most differ in length) decodes 100,000 rules within the noise of the
// switch it replaced (BenchmarkDecodeSection); a map lookup was slower.
func ruleField(k string) int {
	for i, f := range RuleFields {
		if f == k {
			return i
		}
	}
	return -1
}

// rule decodes one rule mapping; path gives its path for problems.
func (d *decoder) rule(m map[string]any, path func() string) Rule {
	var r Rule
	var v ruleValues
	for k, x := range m {
		if i := ruleField(k); i >= 0 {
			v[i] = x
			continue
		}
		if r.Extra == nil {
			r.Extra = map[string]any{}
		}
		r.Extra[k] = x
	}
	if v[fieldID] != nil {
		r.ID, _ = ScalarString(v[fieldID])
	}
	r.Tools = d.ruleTools(v[fieldTools], path)
	r.Pattern, _ = ScalarString(v[fieldPattern])
	d.ruleLevel(&r, &v, path)
	if v[fieldMatchType] != nil {
		s, _ := ScalarString(v[fieldMatchType])
		if !ValidMatchType(s) {
			d.problem(path()+".match_type", "unknown match_type %q; allowed: command, path, args", s)
		}
		r.MatchType = s
	}
	r.Description, _ = ScalarString(v[fieldDescription])
	r.Source, _ = ScalarString(v[fieldSource])
	if v[fieldMode] != nil {
		s, _ := ScalarString(v[fieldMode])
		switch s = strings.ToLower(strings.TrimSpace(s)); s {
		case RuleModeShadow, RuleModeEnforce:
			r.Mode = s
		case "":
		default:
			// An unknown mode is enforced: a typo never turns a rule off.
			d.problem(path()+".mode", "unknown mode %q; allowed: shadow, enforce (the rule is enforced)", s)
		}
	}
	if v[fieldExamples] != nil {
		ex, err := DecodeExamples(v[fieldExamples])
		if err != "" {
			d.problem(path()+".examples", "%s", err)
		}
		r.Examples = ex
	}
	return r
}

// DecodeExamples reads a rule's examples: a mapping with match and no_match,
// each a list of strings (or one string). It returns what it could read
// and, when the value has another shape, what is wrong ("" when nothing).
func DecodeExamples(v any) (*Examples, string) {
	m, ok := asMap(v)
	if !ok {
		return nil, "examples must be a mapping with match and no_match lists of strings"
	}
	ex := &Examples{}
	for _, k := range sortedKeys(m) {
		var list *[]string
		switch k {
		case ExampleMatch:
			list = &ex.Match
		case ExampleNoMatch:
			list = &ex.NoMatch
		default:
			return ex, "unknown key " + strconv.Quote(k) + " in examples (allowed: match, no_match)"
		}
		values, ok := exampleValues(m[k])
		if !ok {
			return ex, k + " must be a list of strings"
		}
		*list = values
	}
	return ex, ""
}

// exampleValues reads one list of examples: a list of strings or one string.
func exampleValues(v any) ([]string, bool) {
	if s, ok := v.(string); ok {
		return []string{s}, true
	}
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// ruleTools reads a rule's tools: a list or one string; nil (reported) when
// it cannot be read. Which tools exist is the engine's to check.
func (d *decoder) ruleTools(v any, rulePath func() string) []string {
	var tools []string
	switch t := v.(type) {
	case string:
		tools = []string{t}
	case []any:
		tools = make([]string, 0, len(t))
		for _, item := range t {
			s, ok := item.(string)
			if !ok {
				d.problem(rulePath()+".tools", "tool names must be strings, got %v", Describe(item))
				return nil
			}
			tools = append(tools, s)
		}
	}
	if len(tools) == 0 {
		d.problem(rulePath()+".tools", "must list at least one tool")
		return nil
	}
	return tools
}

// ruleLevel reads action and severity: a valid action wins and severity is
// not looked at; an action that is not a level makes the whole rule inert
// (docs/configuration.md#validation); an unknown severity reads as HIGH. An action that is
// empty or not a scalar counts as absent.
func (d *decoder) ruleLevel(r *Rule, v *ruleValues, path func() string) {
	if s, ok := ScalarString(v[fieldSeverity]); ok {
		sev, valid := ParseSeverity(s)
		r.Severity = sev
		if !valid {
			r.BadSeverity = s
		}
	} else if v[fieldSeverity] != nil {
		r.Severity, r.BadSeverity = SeverityHigh, ""
	}
	if v[fieldAction] != nil {
		if s, _ := ScalarString(v[fieldAction]); s != "" {
			if lvl, ok := ParseLevel(s); ok {
				r.Action = lvl
				return
			}
			r.BadAction = s
			d.problem(path()+".action", "invalid action %q; allowed: allow, ask, deny (the rule is inert)", s)
			return
		}
	}
	if v[fieldSeverity] != nil {
		s, _ := ScalarString(v[fieldSeverity])
		if _, ok := ParseSeverity(s); !ok {
			d.problem(path()+".severity", "unknown severity %q; HIGH is used (allowed: LOW, MEDIUM, HIGH, CRITICAL)", s)
		}
	}
}
