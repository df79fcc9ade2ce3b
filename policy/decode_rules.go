package policy

import "strconv"

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

// ruleKeys are the rule keys the typed Rule holds; others go to Extra.
var ruleKeys = map[string]bool{
	"id": true, "tools": true, "pattern": true, "match_type": true, "action": true,
	"severity": true, "description": true, "source": true,
}

// rule decodes one rule mapping; path gives its path for problems.
func (d *decoder) rule(m map[string]any, path func() string) Rule {
	var r Rule
	if id, has := m["id"]; has && id != nil {
		r.ID, _ = ScalarString(id)
	}
	r.Tools = d.ruleTools(m["tools"], path)
	r.Pattern, _ = ScalarString(m["pattern"])
	d.ruleLevel(&r, m, path)
	if mt, has := m["match_type"]; has && mt != nil {
		s, _ := ScalarString(mt)
		if s != "command" && s != "path" {
			d.problem(path()+".match_type", "unknown match_type %q; allowed: command, path", s)
		}
		r.MatchType = s
	}
	r.Description, _ = ScalarString(m["description"])
	r.Source, _ = ScalarString(m["source"])
	for k, v := range m {
		if !ruleKeys[k] {
			if r.Extra == nil {
				r.Extra = map[string]any{}
			}
			r.Extra[k] = v
		}
	}
	return r
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
// (contract D4); an unknown severity reads as HIGH. An action that is
// empty or not a scalar counts as absent.
func (d *decoder) ruleLevel(r *Rule, m map[string]any, path func() string) {
	if s, ok := ScalarString(m["severity"]); ok {
		sev, valid := ParseSeverity(s)
		r.Severity = sev
		if !valid {
			r.BadSeverity = s
		}
	} else if v, has := m["severity"]; has && v != nil {
		r.Severity, r.BadSeverity = SeverityHigh, ""
	}
	if a, has := m["action"]; has && a != nil {
		if s, _ := ScalarString(a); s != "" {
			if lvl, ok := ParseLevel(s); ok {
				r.Action = lvl
				return
			}
			r.BadAction = s
			d.problem(path()+".action", "invalid action %q; allowed: allow, ask, deny (the rule is inert)", s)
			return
		}
	}
	if v, has := m["severity"]; has && v != nil {
		s, _ := ScalarString(v)
		if _, ok := ParseSeverity(s); !ok {
			d.problem(path()+".severity", "unknown severity %q; HIGH is used (allowed: LOW, MEDIUM, HIGH, CRITICAL)", s)
		}
	}
}
