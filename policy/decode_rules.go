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
type ruleValues struct {
	id, tools, pattern, matchType, action, severity, description, source, examples, mode any
}

// rule decodes one rule mapping; path gives its path for problems.
func (d *decoder) rule(m map[string]any, path func() string) Rule {
	var r Rule
	var v ruleValues
	for k, x := range m {
		switch k {
		case "id":
			v.id = x
		case "tools":
			v.tools = x
		case "pattern":
			v.pattern = x
		case "match_type":
			v.matchType = x
		case "action":
			v.action = x
		case "severity":
			v.severity = x
		case "description":
			v.description = x
		case "source":
			v.source = x
		case "examples":
			v.examples = x
		case "mode":
			v.mode = x
		default:
			if r.Extra == nil {
				r.Extra = map[string]any{}
			}
			r.Extra[k] = x
		}
	}
	if v.id != nil {
		r.ID, _ = ScalarString(v.id)
	}
	r.Tools = d.ruleTools(v.tools, path)
	r.Pattern, _ = ScalarString(v.pattern)
	d.ruleLevel(&r, &v, path)
	if v.matchType != nil {
		s, _ := ScalarString(v.matchType)
		if !ValidMatchType(s) {
			d.problem(path()+".match_type", "unknown match_type %q; allowed: command, path, args", s)
		}
		r.MatchType = s
	}
	r.Description, _ = ScalarString(v.description)
	r.Source, _ = ScalarString(v.source)
	if v.mode != nil {
		s, _ := ScalarString(v.mode)
		switch s = strings.ToLower(strings.TrimSpace(s)); s {
		case RuleModeShadow, RuleModeEnforce:
			r.Mode = s
		case "":
		default:
			// An unknown mode is enforced: a typo never turns a rule off.
			d.problem(path()+".mode", "unknown mode %q; allowed: shadow, enforce (the rule is enforced)", s)
		}
	}
	if v.examples != nil {
		ex, err := DecodeExamples(v.examples)
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
	if s, ok := ScalarString(v.severity); ok {
		sev, valid := ParseSeverity(s)
		r.Severity = sev
		if !valid {
			r.BadSeverity = s
		}
	} else if v.severity != nil {
		r.Severity, r.BadSeverity = SeverityHigh, ""
	}
	if v.action != nil {
		if s, _ := ScalarString(v.action); s != "" {
			if lvl, ok := ParseLevel(s); ok {
				r.Action = lvl
				return
			}
			r.BadAction = s
			d.problem(path()+".action", "invalid action %q; allowed: allow, ask, deny (the rule is inert)", s)
			return
		}
	}
	if v.severity != nil {
		s, _ := ScalarString(v.severity)
		if _, ok := ParseSeverity(s); !ok {
			d.problem(path()+".severity", "unknown severity %q; HIGH is used (allowed: LOW, MEDIUM, HIGH, CRITICAL)", s)
		}
	}
}
