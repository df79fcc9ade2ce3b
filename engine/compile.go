package engine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ruleSet says where a rule came from, which names it in matched_rule.
type ruleSet uint8

const (
	setBuiltin ruleSet = iota
	setUser
	setOverride
)

// rule is one compiled parameter-level rule or approval override.
type rule struct {
	id       string
	name     string // builtin[<id>], rules[<id>] or approval_overrides[<id>]
	set      ruleSet
	tools    []string
	category Category
	m        *matcher
	level    Level
	order    int
	// addDir is the directory of an /add-dir shell override (override.go).
	addDir string
	// single and singleDeny are the matched_rule strings of this rule as the
	// only hit, precomputed so one hit costs no allocation.
	single, singleDeny string
}

// toolLevel is a configured level and the matched_rule naming it.
type toolLevel struct {
	level Level
	rule  string
}

func (t toolLevel) set() bool { return t.level != LevelNone }

// legacyPattern is one entry of tools.<t>.patterns in the legacy schema.
type legacyPattern struct {
	m     *matcher
	level Level
	rule  string
}

// compiledPolicy is the immutable result of Compile.
type compiledPolicy struct {
	enabled  bool
	tiered   bool
	mode     Mode
	channels map[string]bool
	tools    map[string]toolLevel
	legacy   map[string][]legacyPattern
	defaults toolLevel

	builtin, user, overrides ruleIndex

	ext      extDir
	owners   ownerScopes
	guidance string

	// reasons caches the ask reasons of the common no-hit outcomes.
	reasons map[reasonKey]string
}

type reasonKey struct {
	level      Level
	tool, rule string
}

// compiler accumulates problems while compiling.
type compiler struct {
	problems []Problem
	opts     Options
	mode     Mode
}

func (c *compiler) problem(path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// tieredSchemas are the schema names that select the tiered policy.
var tieredSchemas = map[string]bool{"tiered_policy": true, "v_cc": true, "v4.2": true}

// IsTieredSchema reports whether a schema (or version) value selects the
// tiered policy: lower-cased, spaces removed, one of tiered_policy, v_cc, v4.2.
func IsTieredSchema(v any) bool {
	s, ok := scalarString(v)
	if !ok {
		return false
	}
	s = strings.ToLower(strings.Join(strings.Fields(s), ""))
	return tieredSchemas[s]
}

// knownPermissionKeys are the keys of the permissions section (contract 2).
var knownPermissionKeys = map[string]bool{
	"enabled": true, "schema": true, "version": true, "permission_mode": true, "tools": true,
	"defaults": true, "rules": true, "approval_overrides": true, "external_directory": true,
	"owner_scopes": true, "deny_guidance_message": true,
}

// Compile builds an Engine from the decoded `permissions` section of
// config.yaml (nil when the section is absent) and the decoded `rules` list of
// builtin_rules.yaml. Maps may be map[string]any or map[any]any, as JSON and
// YAML decoders produce them. Every problem is returned, each naming its place
// (permissions.rules[3].pattern, builtin_rules[1].severity, ...); a broken
// entry is left out and the rest of the policy still decides (contract D4).
func Compile(perms map[string]any, builtin []any, opts Options) (*Engine, []Problem) {
	c := &compiler{opts: opts}
	p := &compiledPolicy{}
	p.enabled = truthy(perms["enabled"], true)
	if v, ok := perms["enabled"]; ok {
		if _, isBool := v.(bool); !isBool {
			c.problem("permissions.enabled", "must be true or false, got %v", v)
		}
	}
	schema, hasSchema := perms["schema"]
	if !hasSchema {
		schema = perms["version"]
	}
	p.tiered = IsTieredSchema(schema)
	p.mode = c.compileMode(perms["permission_mode"])
	c.mode = p.mode
	p.channels = channelSet(opts.CheckedChannels)
	for _, k := range sortedKeys(perms) {
		if !knownPermissionKeys[k] {
			c.problem("permissions."+quoteKey(k), "unknown key; it is ignored")
		}
	}
	p.tools, p.legacy = c.compileTools(perms["tools"], p.tiered)
	p.defaults = c.compileDefaults(perms["defaults"], p.tiered)
	p.builtin = c.compileRules(builtin, "builtin_rules", setBuiltin)
	p.user = c.compileRuleList(perms["rules"], "permissions.rules", setUser)
	p.overrides = c.compileRuleList(perms["approval_overrides"], "permissions.approval_overrides", setOverride)
	p.ext = c.compileExternal(perms["external_directory"])
	p.owners = c.compileOwners(perms["owner_scopes"])
	if g, ok := perms["deny_guidance_message"]; ok {
		if s, isStr := g.(string); isStr {
			p.guidance = strings.TrimSpace(s)
		} else {
			c.problem("permissions.deny_guidance_message", "must be a string")
		}
	}
	p.reasons = buildReasonCache(p)
	e := &Engine{opts: opts, problems: c.problems, policy: p}
	if opts.Workspace != "" {
		e.serverWS = e.absolute(opts.Workspace, "/")
	}
	return e, c.problems
}

func (c *compiler) compileMode(v any) Mode {
	if v == nil {
		return ModeNormal
	}
	s, _ := scalarString(v)
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "normal", "strict":
	default:
		c.problem("permissions.permission_mode", "unknown mode %q; normal is used (allowed: normal, strict)", s)
	}
	return ParseMode(s)
}

// channelSet builds the checked-channel set; nil means the default set.
func channelSet(list []string) map[string]bool {
	if list == nil {
		list = []string{"web", "acp", "cli", "tui"}
	}
	set := make(map[string]bool, len(list))
	for _, ch := range list {
		set[strings.ToLower(strings.TrimSpace(ch))] = true
	}
	return set
}

// compileTools reads permissions.tools: tool -> level, or a map with "*"
// (and, in the legacy schema, "patterns").
func (c *compiler) compileTools(v any, tiered bool) (map[string]toolLevel, map[string][]legacyPattern) {
	tools := map[string]toolLevel{}
	legacy := map[string][]legacyPattern{}
	if v == nil {
		return tools, legacy
	}
	m, ok := asMap(v)
	if !ok {
		c.problem("permissions.tools", "must be a mapping of tool name to level")
		return tools, legacy
	}
	for _, name := range sortedKeys(m) {
		path := "permissions.tools." + quoteKey(name)
		switch val := m[name].(type) {
		case map[string]any, map[any]any:
			sub, _ := asMap(val)
			if star, has := sub["*"]; has {
				if lvl, ok := c.level(path+`."*"`, star); ok {
					tools[name] = toolLevel{lvl, "tools." + name + ".*"}
				}
			}
			if pats, has := sub["patterns"]; has && !tiered {
				legacy[name] = c.compileLegacyPatterns(path+".patterns", name, pats)
			}
		default:
			if lvl, ok := c.level(path, val); ok {
				tools[name] = toolLevel{lvl, "tools." + name}
			}
		}
	}
	return tools, legacy
}

func (c *compiler) compileLegacyPatterns(path, tool string, v any) []legacyPattern {
	m, ok := asMap(v)
	if !ok {
		c.problem(path, "must be a mapping of pattern to level")
		return nil
	}
	var out []legacyPattern
	for _, pat := range sortedKeys(m) {
		ppath := path + "[" + fmt.Sprintf("%q", pat) + "]"
		lvl, ok := c.level(ppath, m[pat])
		if !ok {
			continue
		}
		mt, partial, err := compilePattern(pat)
		if err != nil {
			c.problem(ppath, "%v", err)
			continue
		}
		if partial != nil {
			c.problem(ppath, "%v", partial)
		}
		mt.dropTrees() // legacy patterns have no prefilter
		out = append(out, legacyPattern{m: mt, level: lvl, rule: "tools." + tool + ".patterns['" + pat + "']"})
	}
	return out
}

// compileDefaults reads defaults: {"*": level}.
func (c *compiler) compileDefaults(v any, tiered bool) toolLevel {
	if v == nil {
		return toolLevel{}
	}
	m, ok := asMap(v)
	if !ok {
		c.problem("permissions.defaults", `must be a mapping like {"*": ask}`)
		return toolLevel{}
	}
	star, has := m["*"]
	if !has {
		return toolLevel{}
	}
	lvl, ok := c.level(`permissions.defaults."*"`, star)
	if !ok {
		return toolLevel{}
	}
	name := "defaults.*"
	if tiered {
		name = "tiered_policy:defaults.*"
	}
	return toolLevel{lvl, name}
}

// level reads a level value, reporting a problem when it is not one.
func (c *compiler) level(path string, v any) (Level, bool) {
	s, _ := scalarString(v)
	lvl, ok := ParseLevel(s)
	if !ok {
		c.problem(path, "invalid level %v; allowed: allow, ask, deny", describe(v))
	}
	return lvl, ok
}

// describe renders a config value for a problem message.
func describe(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	if v == nil {
		return "(empty)"
	}
	return fmt.Sprintf("%v", v)
}

// ruleIndex holds rules in file order and indexed by tool.
type ruleIndex struct {
	all    []*rule
	byTool map[string]*toolRules
}

func (c *compiler) compileRuleList(v any, path string, set ruleSet) ruleIndex {
	if v == nil {
		return newRuleIndex(nil)
	}
	list, ok := asList(v)
	if !ok {
		c.problem(path, "must be a list of rules")
		return newRuleIndex(nil)
	}
	return c.compileRules(list, path, set)
}

func (c *compiler) compileRules(list []any, path string, set ruleSet) ruleIndex {
	rules := make([]*rule, 0, len(list))
	seen := make(map[string]int, len(list))
	for i, item := range list {
		// The path of a rule is only needed for a problem, so it is built
		// then (100,000 Sprintf calls were a visible share of compiling).
		rpath := func() string { return path + "[" + strconv.Itoa(i) + "]" }
		r := c.compileRule(item, rpath, set)
		if r == nil {
			continue
		}
		r.order = i
		if r.id != "" {
			if first, dup := seen[r.id]; dup {
				c.problem(rpath()+".id", "duplicate id %q (also %s[%d])", r.id, path, first)
			} else {
				seen[r.id] = i
			}
		}
		if set == setOverride && r.level != Allow {
			continue // only action: allow overrides take part (spec 2.3 step 4)
		}
		rules = append(rules, r)
	}
	return newRuleIndex(rules)
}

// compileRule compiles one rule mapping, or returns nil (with problems) when
// it cannot take part; path gives the rule's path for problems.
func (c *compiler) compileRule(item any, path func() string, set ruleSet) *rule {
	m, ok := asMap(item)
	if !ok {
		c.problem(path(), "must be a mapping with tools and pattern")
		return nil
	}
	r := &rule{set: set}
	if id, has := m["id"]; has && id != nil {
		r.id, _ = scalarString(id)
	}
	r.name = ruleName(set, r.id)
	r.tools = c.ruleTools(m["tools"], path)
	patternText, _ := scalarString(m["pattern"])
	mt, partial, err := compilePattern(patternText)
	if err != nil {
		c.problem(path()+".pattern", "%v", err)
	} else if partial != nil {
		c.problem(path()+".pattern", "%v", partial)
	}
	lvl, valid := c.ruleLevel(m, path)
	r.level = lvl
	if mt2, has := m["match_type"]; has && mt2 != nil {
		if s, _ := scalarString(mt2); s != "command" && s != "path" {
			c.problem(path()+".match_type", "unknown match_type %q; allowed: command, path", s)
		}
	}
	if r.tools == nil || err != nil || !valid {
		return nil
	}
	r.category = ToolCategory(r.tools[0])
	if r.category == CategoryNetwork {
		c.problem(path()+".tools", "rules for network tools never match (spec 2.2)")
		return nil
	}
	r.m = mt
	base := ruleBase(set)
	r.single = base + r.name
	r.singleDeny = base + "deny:" + r.name
	if set == setOverride {
		r.single = "tiered_policy:approval_overrides:" + r.name
		r.addDir = addDirOf(r.id, m, patternText) // override.go
	}
	return r
}

// ruleTools reads a rule's tools: a list or one string, all known and of one
// category; nil when the rule must be skipped.
func (c *compiler) ruleTools(v any, rulePath func() string) []string {
	path := func() string { return rulePath() + ".tools" }
	var tools []string
	switch t := v.(type) {
	case string:
		tools = []string{t}
	case []any:
		for _, item := range t {
			s, ok := item.(string)
			if !ok {
				c.problem(path(), "tool names must be strings, got %v", describe(item))
				return nil
			}
			tools = append(tools, s)
		}
	default:
		c.problem(path(), "must list at least one tool")
		return nil
	}
	if len(tools) == 0 {
		c.problem(path(), "must list at least one tool")
		return nil
	}
	first := ToolCategory(tools[0])
	for _, name := range tools {
		cat := ToolCategory(name)
		if cat == CategoryUnknown {
			c.problem(path(), "unknown tool %q; the rule is skipped (known: %s)", name, knownToolList())
			return nil
		}
		if cat != first {
			c.problem(path(), "mixes %s and %s tools (%q); the rule is skipped", first, cat, name)
			return nil
		}
	}
	return tools
}

func knownToolList() string {
	all := append(append(append([]string{}, ShellTools...), PathTools...), NetworkTools...)
	return strings.Join(all, ", ")
}

// ruleLevel resolves a rule's level: an action wins; else the severity
// (missing or unknown = HIGH) through the mode's table (spec 2.1). An action
// that is not a level makes the whole rule inert (contract D4): valid is false.
func (c *compiler) ruleLevel(m map[string]any, path func() string) (lvl Level, valid bool) {
	if a, has := m["action"]; has && a != nil {
		s, _ := scalarString(a)
		if s != "" {
			if lvl, ok := ParseLevel(s); ok {
				return lvl, true
			}
			c.problem(path()+".action", "invalid action %q; allowed: allow, ask, deny (the rule is inert)", s)
			return LevelNone, false
		}
	}
	sev := SeverityHigh
	if v, has := m["severity"]; has && v != nil {
		s, _ := scalarString(v)
		var ok bool
		if sev, ok = ParseSeverity(s); !ok {
			c.problem(path()+".severity", "unknown severity %q; HIGH is used (allowed: LOW, MEDIUM, HIGH, CRITICAL)", s)
		}
	}
	return SeverityLevel(sev, c.mode), true
}

func ruleName(set ruleSet, id string) string {
	if id == "" {
		id = "?"
	}
	switch set {
	case setBuiltin:
		return "builtin[" + id + "]"
	case setOverride:
		return "approval_overrides[" + id + "]"
	}
	return "rules[" + id + "]"
}

func ruleBase(set ruleSet) string {
	if set == setBuiltin {
		return "tiered_policy:builtin:"
	}
	return "tiered_policy:rules:"
}

// buildReasonCache precomputes the reasons of the outcomes that need no rule
// hit (tool levels, defaults, the fallback), so a benign call costs no
// allocation.
func buildReasonCache(p *compiledPolicy) map[reasonKey]string {
	tools := append(append(append([]string{}, ShellTools...), PathTools...), NetworkTools...)
	for t := range p.tools {
		tools = append(tools, t)
	}
	sort.Strings(tools)
	cache := make(map[reasonKey]string, len(tools)*4)
	put := func(l Level, tool, rule string) {
		if rule == "" {
			return
		}
		key := reasonKey{level: l, rule: rule}
		if l == Ask {
			key.tool = tool
		}
		if _, done := cache[key]; !done {
			cache[key] = formatReason(l, tool, rule)
		}
	}
	for _, t := range tools {
		rules := []string{"default", p.defaults.rule}
		if tl, ok := p.tools[t]; ok {
			rules = append(rules, tl.rule)
		}
		for _, r := range rules {
			for _, l := range []Level{Allow, Ask, Deny} {
				put(l, t, r)
			}
		}
	}
	return cache
}
