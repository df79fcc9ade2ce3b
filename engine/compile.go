package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/policy"
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
	id string
	// name is builtin[<id>], rules[<id>] or approval_overrides[<id>]: the
	// tail of single, so that it costs no allocation of its own.
	name  string
	tools []string
	m     *matcher
	order int
	// addDir is the directory of an /add-dir shell override (override.go).
	addDir string
	// single is the matched_rule string of this rule as the only hit at
	// its level, precomputed so one hit costs no allocation: deny:<name>
	// after the set's prefix for a deny rule (finalize reports a deny rule
	// so), else <name>. One string per rule, not three: a policy of
	// 100,000 rules keeps 100,000 of them.
	single   string
	set      ruleSet
	category Category
	level    policy.Level
	// args marks a match_type: args rule, which matches the call's
	// arguments as canonical JSON (args_match.go), not its command or paths.
	args bool
}

// toolLevel is a configured level and the matched_rule naming it.
type toolLevel struct {
	level policy.Level
	rule  string
}

func (t toolLevel) set() bool { return t.level != policy.LevelNone }

// legacyPattern is one entry of tools.<t>.patterns in the legacy schema.
type legacyPattern struct {
	m     *matcher
	level policy.Level
	rule  string
}

// compiledPolicy is the immutable result of Compile.
type compiledPolicy struct {
	// builtinWords are the built-in rules' descriptions by their name in
	// matched_rule (builtin[id]), for the words a person or agent reads.
	builtinWords map[string]string
	enabled      bool
	tiered       bool
	mode         policy.Mode
	channels     map[string]bool
	tools        map[string]toolLevel
	legacy       map[string][]legacyPattern
	defaults     toolLevel

	builtin, user, overrides ruleIndex

	ext      extDir
	owners   ownerScopes
	guidance string

	// reasons caches the ask reasons of the common no-hit outcomes.
	reasons map[reasonKey]string
	// hitReasons remembers the reasons of rule hits as calls meet them.
	hitReasons *reasonMemo
}

type reasonKey struct {
	level      policy.Level
	tool, rule string
}

// compiler accumulates problems while compiling.
type compiler struct {
	problems []policy.Problem
	opts     Options
	mode     policy.Mode
	// workers bounds the goroutines compiling one rule list; 0 means
	// GOMAXPROCS (compile_parallel.go).
	workers int
}

func (c *compiler) problem(path, format string, args ...any) {
	c.problems = append(c.problems, policy.Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// IsTieredSchema reports whether a schema (or version) value selects the
// tiered policy: lower-cased, spaces removed, one of tiered_policy, v_cc, v4.2.
func IsTieredSchema(v any) bool { return policy.IsTieredSchema(v) }

// Compile builds an Engine from the decoded `permissions` section of
// config.yaml (nil when the section is absent) and the decoded `rules` list of
// builtin_rules.yaml. Maps may be map[string]any or map[any]any, as JSON and
// YAML decoders produce them. Every problem is returned, each naming its place
// (permissions.rules[3].pattern, builtin_rules[1].severity, ...); a broken
// entry is left out and the rest of the policy still decides (docs/configuration.md#validation).
// It decodes both through the policy package and calls CompileSection.
func Compile(perms map[string]any, builtin []any, opts Options) (*Engine, []policy.Problem) {
	sec, b := policy.DecodePolicy(perms, builtin)
	return CompileSection(&sec, &b, opts)
}

// CompileSection builds an Engine from a typed section and the typed
// built-in rules (nil for none). The problems returned are the decoding
// problems they carry and the ones compiling finds (patterns that do not
// compile, unknown tools, duplicate ids, ...), in the order of the parts
// and entries they name (orderProblems).
func CompileSection(sec *policy.Section, builtin *policy.Builtin, opts Options) (*Engine, []policy.Problem) {
	if sec != nil && hasShadowRules(sec.Rules, sec.Overrides) {
		return compileWithShadow(sec, builtin, opts) // shadow.go
	}
	return compileSection(sec, builtin, opts)
}

// compileSection is CompileSection of a section whose rules are all
// enforced.
func compileSection(sec *policy.Section, builtin *policy.Builtin, opts Options) (*Engine, []policy.Problem) {
	if sec == nil {
		sec = &policy.Section{Enabled: true, External: policy.ExternalDirs{Star: policy.Ask}}
	}
	c := &compiler{opts: opts, mode: sec.Mode}
	c.problems = append(c.problems, sec.Problems...)
	var builtinRules []policy.Rule
	if builtin != nil {
		c.problems = append(c.problems, builtin.Problems...)
		builtinRules = builtin.Rules
	}
	p := &compiledPolicy{enabled: sec.Enabled, tiered: sec.Tiered, mode: sec.Mode, guidance: sec.DenyGuidance}
	p.channels = channelSet(opts.CheckedChannels)
	p.tools, p.legacy = c.compileTools(sec.Tools, sec.Tiered)
	if sec.Defaults != policy.LevelNone {
		p.defaults = toolLevel{sec.Defaults, "defaults.*"}
		if sec.Tiered {
			p.defaults.rule = "tiered_policy:defaults.*"
		}
	}
	p.builtin, p.user, p.overrides = c.compileRuleSets(builtinRules, sec.Rules, sec.Overrides)
	c.checkExamples(sec.Rules, policy.PathRules)
	c.checkExamples(sec.Overrides, policy.PathOverrides)
	p.builtinWords = builtinDescriptions(builtinRules)
	p.ext = c.compileExternal(&sec.External)
	p.owners = c.compileOwners(&sec.Owners)
	p.reasons = buildReasonCache(p)
	p.hitReasons = &reasonMemo{}
	orderProblems(c.problems)
	e := &Engine{opts: opts, problems: c.problems, policy: p}
	if opts.Workspace != "" {
		e.serverWS = e.absolute(opts.Workspace, "/")
	}
	return e, c.problems
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

// compileTools builds the tool levels and, in the legacy schema, the
// tools.<t>.patterns entries.
func (c *compiler) compileTools(list []policy.ToolSetting, tiered bool) (map[string]toolLevel, map[string][]legacyPattern) {
	tools := make(map[string]toolLevel, len(list))
	legacy := map[string][]legacyPattern{}
	for i := range list {
		t := &list[i]
		if t.Level != policy.LevelNone {
			name := "tools." + t.Name
			if t.Star {
				name += ".*"
			}
			tools[t.Name] = toolLevel{t.Level, name}
		}
		if t.Patterns != nil && !tiered {
			legacy[t.Name] = c.compileLegacyPatterns(t.Name, t.Patterns)
		}
	}
	return tools, legacy
}

func (c *compiler) compileLegacyPatterns(tool string, pats []policy.LegacyPattern) []legacyPattern {
	var out []legacyPattern
	for _, lp := range pats {
		mt, partial, err := compilePattern(lp.Pattern)
		if err != nil {
			c.problem(policy.LegacyPatternPath(tool, lp.Pattern), "%v", err)
			continue
		}
		if partial != nil {
			c.problem(policy.LegacyPatternPath(tool, lp.Pattern), "%v", partial)
		}
		mt.dropTrees() // legacy patterns have no prefilter
		if lp.Level >= policy.Ask {
			mt.strict()
		}
		out = append(out, legacyPattern{m: mt, level: lp.Level, rule: "tools." + tool + ".patterns['" + lp.Pattern + "']"})
	}
	return out
}

// ruleIndex holds rules in file order and indexed by tool.
type ruleIndex struct {
	all    []*rule
	byTool map[string]*toolRules
	// byServer finds, by server name, the list of the mcp__SERVER__* rules
	// (also byTool's entry under that name): the rules of an MCP tool no
	// rule names on its own (rulesOf).
	byServer map[string]*toolRules
	// byName finds a rule by its name (its matched_rule part) in one
	// lookup: the risky-option check after an allow reads the allow rule's
	// pattern, which a scan of all would make cost grow with the policy.
	byName map[string][]*rule
}

// compileRules compiles a list of rules (compileChunks, possibly in
// parallel), then, in file order, appends each rule's problems, checks its
// id for duplicates and indexes the rules that take part: the problems come
// out as a rule-by-rule compile appends them.
func (c *compiler) compileRules(list []policy.Rule, path string, set ruleSet) ruleIndex {
	rules := make([]*rule, 0, len(list))
	seen := make(map[string]int, len(list))
	i := 0
	for _, ch := range c.compileChunks(list, path, set) { // compile_parallel.go
		prev := 0
		for j, r := range ch.rules {
			c.problems = append(c.problems, ch.problems[prev:ch.ends[j]]...)
			prev = ch.ends[j]
			if r != nil && c.keepRule(r, seen, &list[i], path, set) {
				rules = append(rules, r)
			}
			i++
		}
	}
	return newRuleIndex(rules)
}

// keepRule is the sequential part of compiling a rule: its order and the
// duplicate-id check; it reports whether r takes part.
func (c *compiler) keepRule(r *rule, seen map[string]int, pr *policy.Rule, path string, set ruleSet) bool {
	r.order = pr.Index
	if r.id != "" {
		if first, dup := seen[r.id]; dup {
			// The path of a rule is only needed for a problem, so it is
			// built then (100,000 Sprintf calls were a visible share).
			c.problem(policy.ItemPath(path, pr.Index)+".id", "duplicate id %q (also %s[%d])", r.id, path, first)
		} else {
			seen[r.id] = pr.Index
		}
	}
	// Only action: allow overrides take part (docs/decisions.md#the-order-of-the-steps step 4).
	return set != setOverride || r.level == policy.Allow
}

// compileRule compiles one decoded rule, or returns nil (with problems)
// when it cannot take part; path gives the rule's path for problems.
func (c *compiler) compileRule(pr *policy.Rule, path func() string, set ruleSet) *rule {
	r := &rule{set: set, id: pr.ID, args: pr.MatchType == policy.MatchArgs}
	r.tools = c.ruleTools(pr.Tools, path)
	mt, partial, err := compileRulePattern(pr.Pattern, r.args)
	if err != nil {
		c.problem(path()+".pattern", "%v", err)
	} else if partial != nil {
		c.problem(path()+".pattern", "%v", partial)
	}
	lvl, valid := pr.Level(c.mode)
	r.level = lvl
	if r.tools == nil || err != nil || !valid {
		return nil
	}
	r.category = ToolCategory(r.tools[0])
	if r.category == CategoryNetwork && !r.args {
		c.problem(path()+".tools", "rules for network tools never match (docs/decisions.md#patterns)")
		return nil
	}
	if r.args && set == setOverride {
		c.problem(path()+".match_type", "an approval override matches a command or path values, never args; the override is skipped (docs/decisions.md#args-rules)")
		return nil
	}
	r.m = mt
	if set != setOverride && r.level >= policy.Ask {
		mt.strict()
	}
	base := ruleBase(set)
	switch {
	case set == setOverride:
		base = "tiered_policy:approval_overrides:"
		r.addDir = addDirOf(r.id, pr.Source, pr.Pattern) // override.go
	case r.level == policy.Deny:
		base += "deny:"
	}
	r.single = ruleName(base, set, r.id) // one allocation for both strings
	r.name = r.single[len(base):]
	return r
}

// ruleTools checks a decoded rule's tools: all known and of one category;
// nil when the rule must be skipped (decoding already reported tools it
// could not read).
func (c *compiler) ruleTools(tools []string, rulePath func() string) []string {
	if tools == nil {
		return nil
	}
	if err := checkTools(tools); err != nil {
		c.problem(rulePath()+".tools", "%s", err.Message)
		return nil
	}
	return tools
}

// checkTools reports tools that are unknown or of mixed categories.
func checkTools(tools []string) *policy.FieldError {
	if len(tools) == 0 {
		return &policy.FieldError{Field: "tools", Message: "must list at least one tool", Err: policy.ErrNoTools}
	}
	first := ToolCategory(tools[0])
	for _, name := range tools {
		if strings.HasPrefix(name, "mcp__") {
			if err := checkMCPName(name); err != nil {
				return &policy.FieldError{Field: "tools", Err: policy.ErrBadTools, Message: err.Error() + "; the rule is skipped"}
			}
		}
		cat := ToolCategory(name)
		if cat == CategoryUnknown {
			return &policy.FieldError{Field: "tools", Err: policy.ErrBadTools,
				Message: fmt.Sprintf("unknown tool %q; the rule is skipped (known: %s)", name, knownToolList())}
		}
		if cat != first {
			return &policy.FieldError{Field: "tools", Err: policy.ErrBadTools,
				Message: fmt.Sprintf("mixes %s and %s tools (%q); the rule is skipped", first, cat, name)}
		}
	}
	return nil
}

func knownToolList() string {
	all := append(append(append([]string{}, ShellTools...), PathTools...), NetworkTools...)
	return strings.Join(all, ", ")
}

// ruleName is prefix followed by the rule's name: builtin[<id>],
// rules[<id>] or approval_overrides[<id>] (? for a rule without an id).
func ruleName(prefix string, set ruleSet, id string) string {
	if id == "" {
		id = "?"
	}
	switch set {
	case setBuiltin:
		return prefix + "builtin[" + id + "]"
	case setOverride:
		return prefix + "approval_overrides[" + id + "]"
	}
	return prefix + "rules[" + id + "]"
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
	put := func(l policy.Level, tool, rule string) {
		if rule == "" {
			return
		}
		key := reasonKey{level: l, rule: rule}
		if l == policy.Ask {
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
			for _, l := range []policy.Level{policy.Allow, policy.Ask, policy.Deny} {
				put(l, t, r)
			}
		}
	}
	return cache
}

// CheckRule says what keeps a rule from taking part, as compiling would:
// its tools (policy.ErrNoTools, policy.ErrBadTools: unknown, of mixed
// categories, or an MCP name of another form than mcp__SERVER__TOOL or
// mcp__SERVER__*), its pattern (policy.ErrBadPattern) or, for network
// tools, that it never matches (policy.ErrNetworkTools; an args rule
// does). nil when the rule would
// compile. Field is "tools" or "pattern"; callers tell the kinds apart with
// errors.Is, never by the message. A re: pattern that compiles only
// alternative by alternative counts as a pattern error, as ValidatePattern
// says.
func CheckRule(r *policy.Rule) *policy.FieldError {
	if err := checkTools(r.Tools); err != nil {
		return err
	}
	if err := ValidatePattern(r.Pattern); err != nil {
		return &policy.FieldError{Field: "pattern", Message: err.Error(), Err: policy.ErrBadPattern}
	}
	if ToolCategory(r.Tools[0]) == CategoryNetwork && r.MatchType != policy.MatchArgs {
		return &policy.FieldError{Field: "tools", Message: "rules for network tools never match (docs/decisions.md#patterns)", Err: policy.ErrNetworkTools}
	}
	return nil
}

// builtinDescriptions indexes the built-in rules' descriptions by name.
func builtinDescriptions(rules []policy.Rule) map[string]string {
	m := make(map[string]string, len(rules))
	for i := range rules {
		if r := &rules[i]; r.ID != "" && r.Description != "" {
			m["builtin["+r.ID+"]"] = r.Description
		}
	}
	return m
}

// BuiltinWords returns the descriptions of the built-in rules a
// matched_rule names, in its order, each once ("" for none).
func (e *Engine) BuiltinWords(matched string) string {
	var out []string
	for rest := matched; ; {
		i := strings.Index(rest, "builtin[")
		if i < 0 {
			break
		}
		rest = rest[i:]
		j := strings.IndexByte(rest, ']')
		if j < 0 {
			break
		}
		if d := e.policy.builtinWords[rest[:j+1]]; d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
		rest = rest[j+1:]
	}
	return strings.Join(out, " ")
}
