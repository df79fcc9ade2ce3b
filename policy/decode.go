package policy

import (
	"fmt"
	"strings"
)

// knownKeys are the keys of the permissions section (docs/configuration.md#permissions-keys).
var knownKeys = map[string]bool{
	"enabled": true, "schema": true, "version": true, "permission_mode": true, "tools": true,
	"defaults": true, "rules": true, "approval_overrides": true, "external_directory": true,
	"owner_scopes": true, "deny_guidance_message": true,
}

// decoder accumulates problems while decoding.
type decoder struct{ problems []Problem }

func (d *decoder) problem(path, format string, args ...any) {
	d.problems = append(d.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// DecodeSection reads the decoded `permissions` section (nil when absent),
// as a YAML or JSON decoder produced it (map[string]any or map[any]any
// inside). It never fails: every problem is in Section.Problems, naming its
// place, and a broken entry is left out (docs/configuration.md#validation).
func DecodeSection(perms map[string]any) Section {
	d := &decoder{}
	s := Section{Enabled: truthy(perms["enabled"], true)}
	if v, ok := perms["enabled"]; ok {
		if _, isBool := v.(bool); !isBool {
			d.problem("permissions.enabled", "must be true or false, got %v", v)
		}
	}
	schema, has := perms["schema"]
	s.SchemaKey = "schema"
	if !has {
		schema, has = perms["version"]
		s.SchemaKey = "version"
	}
	if !has {
		s.SchemaKey = ""
	}
	s.Schema, _ = ScalarString(schema)
	s.Tiered = IsTieredSchema(schema)
	s.Mode, s.ModeText = d.mode(perms["permission_mode"])
	for _, k := range sortedKeys(perms) {
		if !knownKeys[k] {
			d.problem("permissions."+QuoteKey(k), "unknown key; it is ignored")
			if s.Extra == nil {
				s.Extra = map[string]any{}
			}
			s.Extra[k] = perms[k]
		}
	}
	s.Tools = d.tools(perms["tools"], s.Tiered)
	s.Defaults = d.defaults(perms["defaults"])
	s.Rules = d.ruleList(perms["rules"], PathRules)
	s.Overrides = d.ruleList(perms["approval_overrides"], PathOverrides)
	s.External = d.external(perms["external_directory"])
	s.Owners = d.owners(perms["owner_scopes"])
	if g, ok := perms["deny_guidance_message"]; ok {
		if str, isStr := g.(string); isStr {
			s.DenyGuidance = strings.TrimSpace(str)
		} else {
			d.problem("permissions.deny_guidance_message", "must be a string")
		}
	}
	s.Problems = d.problems
	return s
}

// Builtin is the decoded rules list of builtin_rules.yaml.
type Builtin struct {
	Rules    []Rule
	Problems []Problem
}

// DecodeBuiltin reads the decoded `rules` list of builtin_rules.yaml;
// problems are named builtin_rules[i]....
func DecodeBuiltin(list []any) Builtin {
	d := &decoder{}
	rules := d.rules(list, PathBuiltin)
	return Builtin{Rules: rules, Problems: d.problems}
}

// DecodePolicy reads the decoded permissions section (nil when absent) and
// the decoded rules list of builtin_rules.yaml, as DecodeSection and
// DecodeBuiltin do. The two share nothing and decode side by side, which
// shortens a start with a large policy.
func DecodePolicy(perms map[string]any, builtin []any) (Section, Builtin) {
	var b Builtin
	done := make(chan struct{})
	go func() {
		defer close(done)
		b = DecodeBuiltin(builtin)
	}()
	sec := DecodeSection(perms)
	<-done
	return sec, b
}

// DecodeRule reads one decoded rule or override mapping; path names it in
// problems (such as permissions.rules[3]). ok is false when v is not a
// mapping.
func DecodeRule(v any, path string) (Rule, []Problem, bool) {
	d := &decoder{}
	m, ok := asMap(v)
	if !ok {
		d.problem(path, "must be a mapping with tools and pattern")
		return Rule{}, d.problems, false
	}
	r := d.rule(m, func() string { return path })
	return r, d.problems, true
}

func (d *decoder) mode(v any) (Mode, string) {
	if v == nil {
		return ModeNormal, ""
	}
	s, _ := ScalarString(v)
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "normal", "strict":
	default:
		d.problem("permissions.permission_mode", "unknown mode %q; normal is used (allowed: normal, strict)", s)
	}
	return ParseMode(s), s
}

// level reads a level value, reporting a problem when it is not one.
func (d *decoder) level(path string, v any) (Level, bool) {
	s, _ := ScalarString(v)
	lvl, ok := ParseLevel(s)
	if !ok {
		d.problem(path, "invalid level %v; allowed: allow, ask, deny", Describe(v))
	}
	return lvl, ok
}

// tools reads permissions.tools: tool -> level, or a mapping with "*"
// (and, in the legacy schema, "patterns").
func (d *decoder) tools(v any, tiered bool) []ToolSetting {
	if v == nil {
		return nil
	}
	m, ok := asMap(v)
	if !ok {
		d.problem("permissions.tools", "must be a mapping of tool name to level")
		return nil
	}
	out := make([]ToolSetting, 0, len(m))
	for _, name := range sortedKeys(m) {
		path := ToolPath(name)
		t := ToolSetting{Name: name}
		switch val := m[name].(type) {
		case map[string]any, map[any]any:
			sub, _ := asMap(val)
			if star, has := sub["*"]; has {
				if lvl, ok := d.level(path+`."*"`, star); ok {
					t.Level, t.Star = lvl, true
				}
			}
			if pats, has := sub["patterns"]; has && !tiered {
				t.Patterns = d.legacyPatterns(path+".patterns", name, pats)
			}
		default:
			if lvl, ok := d.level(path, val); ok {
				t.Level = lvl
			}
		}
		out = append(out, t)
	}
	return out
}

func (d *decoder) legacyPatterns(path, tool string, v any) []LegacyPattern {
	m, ok := asMap(v)
	if !ok {
		d.problem(path, "must be a mapping of pattern to level")
		return nil
	}
	out := []LegacyPattern{}
	for _, pat := range sortedKeys(m) {
		if lvl, ok := d.level(LegacyPatternPath(tool, pat), m[pat]); ok {
			out = append(out, LegacyPattern{Pattern: pat, Level: lvl})
		}
	}
	return out
}

// defaults reads defaults: {"*": level}.
func (d *decoder) defaults(v any) Level {
	if v == nil {
		return LevelNone
	}
	m, ok := asMap(v)
	if !ok {
		d.problem("permissions.defaults", `must be a mapping like {"*": ask}`)
		return LevelNone
	}
	star, has := m["*"]
	if !has {
		return LevelNone
	}
	lvl, _ := d.level(`permissions.defaults."*"`, star)
	return lvl
}
