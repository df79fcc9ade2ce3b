package policy

// Map renders the rule as the decoded mapping config.yaml holds (the form
// store writes through YAML nodes and the API answers as JSON): tools as a
// list, levels and severities by name, empty fields left out, pattern
// always written, Extra keys kept.
func (r *Rule) Map() map[string]any {
	m := make(map[string]any, 8+len(r.Extra))
	for k, v := range r.Extra {
		m[k] = v
	}
	if r.ID != "" {
		m["id"] = r.ID
	}
	if r.Tools != nil {
		tools := make([]any, len(r.Tools))
		for i, t := range r.Tools {
			tools[i] = t
		}
		m["tools"] = tools
	}
	m["pattern"] = r.Pattern
	if r.MatchType != "" {
		m["match_type"] = r.MatchType
	}
	switch {
	case r.Action != LevelNone:
		m["action"] = r.Action.String()
	case r.BadAction != "":
		m["action"] = r.BadAction
	}
	switch {
	case r.BadSeverity != "":
		m["severity"] = r.BadSeverity
	case r.Severity != 0:
		m["severity"] = r.Severity.String()
	}
	if r.Description != "" {
		m["description"] = r.Description
	}
	if r.Source != "" {
		m["source"] = r.Source
	}
	if r.Mode != "" {
		m["mode"] = r.Mode
	}
	if r.Examples != nil {
		m["examples"] = r.Examples.Map()
	}
	return m
}

// Map renders examples as config.yaml holds them, each list only when it
// has values.
func (x *Examples) Map() map[string]any {
	m := make(map[string]any, 2)
	for _, kv := range []struct {
		key    string
		values []string
	}{{ExampleMatch, x.Match}, {ExampleNoMatch, x.NoMatch}} {
		if len(kv.values) == 0 {
			continue
		}
		list := make([]any, len(kv.values))
		for i, v := range kv.values {
			list[i] = v
		}
		m[kv.key] = list
	}
	return m
}

// Map renders the section as a decoded mapping that DecodeSection reads
// back to the same Section (for a section without problems).
func (s *Section) Map() map[string]any {
	m := make(map[string]any, 12+len(s.Extra))
	for k, v := range s.Extra {
		m[k] = v
	}
	m["enabled"] = s.Enabled
	if s.SchemaKey != "" {
		m[s.SchemaKey] = s.Schema
	}
	if s.ModeText != "" {
		m["permission_mode"] = s.ModeText
	}
	if s.Tools != nil {
		m["tools"] = toolsMap(s.Tools)
	}
	if s.Defaults != LevelNone {
		m["defaults"] = map[string]any{"*": s.Defaults.String()}
	}
	if s.Rules != nil {
		m["rules"] = rulesList(s.Rules)
	}
	if s.Overrides != nil {
		m["approval_overrides"] = rulesList(s.Overrides)
	}
	if ext, ok := s.External.value(); ok {
		m["external_directory"] = ext
	}
	if s.Owners.Configured {
		m["owner_scopes"] = s.Owners.Map()
	}
	if s.DenyGuidance != "" {
		m["deny_guidance_message"] = s.DenyGuidance
	}
	return m
}

func rulesList(rules []Rule) []any {
	out := make([]any, len(rules))
	for i := range rules {
		out[i] = rules[i].Map()
	}
	return out
}

func toolsMap(tools []ToolSetting) map[string]any {
	out := make(map[string]any, len(tools))
	for _, t := range tools {
		out[t.Name] = toolValue(t.Level, t.Star, t.Patterns)
	}
	return out
}

// toolValue renders one entry of tools (of the section or of an owner
// scope): the plain level, or a mapping with "*" and patterns as written.
func toolValue(level Level, star bool, pats []LegacyPattern) any {
	if !star && pats == nil && level != LevelNone {
		return level.String()
	}
	sub := map[string]any{}
	if star {
		sub["*"] = level.String()
	}
	if pats != nil {
		sub["patterns"] = patternsMap(pats)
	}
	return sub
}

func patternsMap(pats []LegacyPattern) map[string]any {
	out := make(map[string]any, len(pats))
	for _, p := range pats {
		out[p.Pattern] = p.Level.String()
	}
	return out
}

// value renders external_directory; ok is false when there is nothing to
// write (the default: "*" ask, no keys).
func (x *ExternalDirs) value() (any, bool) {
	if x.Fixed {
		return x.Level.String(), true
	}
	if !x.StarSet && len(x.Keys) == 0 {
		return nil, false
	}
	m := make(map[string]any, len(x.Keys)+1)
	if x.StarSet {
		m["*"] = x.Star.String()
	}
	for _, k := range x.Keys {
		m[k.Key] = k.Level.String()
	}
	return m, true
}

// Map renders owner_scopes as channel -> principal -> scope.
func (o *OwnerScopes) Map() map[string]any {
	out := make(map[string]any, len(o.Channels))
	for _, ch := range o.Channels {
		principals := make(map[string]any, len(ch.Principals))
		for _, ps := range ch.Principals {
			principals[ps.Principal] = ps.Map()
		}
		out[ch.Channel] = principals
	}
	return out
}

// Map renders one owner scope: {tools: {...}, defaults: {"*": level}}.
func (ps *OwnerScope) Map() map[string]any {
	m := map[string]any{}
	if ps.Tools != nil {
		tools := make(map[string]any, len(ps.Tools))
		for _, t := range ps.Tools {
			tools[t.Tool] = toolValue(t.Level, t.Star, t.Patterns)
		}
		m["tools"] = tools
	}
	if ps.Defaults != LevelNone {
		m["defaults"] = map[string]any{"*": ps.Defaults.String()}
	}
	return m
}
