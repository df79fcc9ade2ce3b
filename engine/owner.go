package engine

import "strings"

// ownerScopes is the compiled permissions.owner_scopes of contract 3
// "Digital persona": keyed by channel, then by principal user id, as
// JiuwenSwarm writes it:
//
//	owner_scopes:
//	  feishu:
//	    ou_123:
//	      tools: {bash: {patterns: {"git *": allow}, "*": deny}, read_file: allow}
//	      defaults: {"*": deny}
type ownerScopes struct {
	// configured is false when owner_scopes is absent, empty or not a
	// mapping: a persona call then gets the global level with ask turned
	// into deny (contract D3).
	configured bool
	scopes     map[ownerKey]*ownerScope
	// earlier maps a principal to the matched_rule of an entry written in
	// toolgate's earlier shape (owner_scopes.<principal>.tools). Such an
	// entry is inert, and every persona call of that principal is denied
	// until it is moved under a channel: its restrictions are never
	// silently dropped.
	earlier map[string]string
}

// ownerKey finds an owner scope: the channel id and the principal user id,
// both as written in config.yaml (the reference strips the request's
// values and compares them exactly, case included).
type ownerKey struct{ channel, principal string }

// ownerScope is the compiled scope of one principal on one channel.
type ownerScope struct {
	rule string // owner_scopes.<channel>.<principal>
	// broken is set when the scope, or its tools or defaults, is not a
	// mapping: the admin meant to restrict this persona and toolgate cannot
	// tell how, so every call under it is denied (fail closed).
	broken   bool
	tools    map[string]*ownerTool
	defaults toolLevel
}

// ownerTool is the entry of one tool in an owner scope: a plain level (in
// star), or patterns and a "*" level.
type ownerTool struct {
	rule     string // owner_scopes.<channel>.<principal>.tools.<tool>
	broken   bool   // not a level nor a mapping, or patterns not a mapping: denies
	patterns []ownerPattern
	star     toolLevel
}

// ownerPattern is one entry of tools.<tool>.patterns, in the sorted order
// of its pattern text.
type ownerPattern struct {
	m     *matcher
	level Level
	rule  string // ...tools.<tool>.patterns['<pattern>']
}

// compileOwners reads owner_scopes. A level that is not exactly allow, ask
// or deny makes its entry deny: the reference compares the raw string with
// "allow" and refuses anything else, so no other spelling may grant a
// persona a call (contract D4 reports it; fail closed keeps it safe).
func (c *compiler) compileOwners(v any) ownerScopes {
	out := ownerScopes{}
	if v == nil {
		return out
	}
	m, ok := asMap(v)
	if !ok {
		c.problem("permissions.owner_scopes", "must be a mapping of channel id to {principal user id: scope}; it is ignored, so persona calls get the global level with ask turned into deny")
		return out
	}
	if len(m) == 0 {
		return out
	}
	out.configured = true
	out.scopes = map[ownerKey]*ownerScope{}
	for _, ch := range sortedKeys(m) {
		path := "permissions.owner_scopes." + quoteKey(ch)
		principals, ok := asMap(m[ch])
		if !ok {
			c.problem(path, "must be a mapping of principal user id to scope (owner_scopes.<channel>.<principal>); it is ignored")
			continue
		}
		if isEarlierShape(principals) {
			if out.earlier == nil {
				out.earlier = map[string]string{}
			}
			out.earlier[ch] = "owner_scopes." + ch
			c.problem(path, "written in toolgate's earlier shape owner_scopes.<principal>.tools; owner scopes are keyed by channel, then principal: move it under a channel, e.g. owner_scopes.feishu.%s. Until then it is inert and every persona call of principal %q is denied", ch, ch)
			continue
		}
		for _, pid := range sortedKeys(principals) {
			key := ownerKey{channel: ch, principal: pid}
			out.scopes[key] = c.compileOwnerScope(path+"."+quoteKey(pid), "owner_scopes."+ch+"."+pid, principals[pid])
		}
	}
	return out
}

// isEarlierShape reports whether a channel's mapping is really a scope in
// toolgate's earlier shape (owner_scopes.<principal>: {tools, defaults}).
func isEarlierShape(m map[string]any) bool {
	for _, k := range []string{"tools", "defaults"} {
		if v, has := m[k]; has {
			if _, isMap := asMap(v); isMap {
				return true
			}
		}
	}
	return false
}

// compileOwnerScope compiles owner_scopes.<channel>.<principal>.
func (c *compiler) compileOwnerScope(path, rule string, v any) *ownerScope {
	sc := &ownerScope{rule: rule, tools: map[string]*ownerTool{}}
	m, ok := asMap(v)
	if !ok {
		c.problem(path, "must be a mapping with tools and/or defaults; every persona call under it is denied")
		sc.broken = true
		return sc
	}
	for _, k := range sortedKeys(m) {
		switch k {
		case "tools":
			tm, ok := asMap(m[k])
			if !ok {
				c.problem(path+".tools", "must be a mapping of tool name to level or {patterns, \"*\"}; every persona call under this scope is denied")
				sc.broken = true
				continue
			}
			for _, t := range sortedKeys(tm) {
				sc.tools[t] = c.compileOwnerTool(path+".tools."+quoteKey(t), rule+".tools."+t, tm[t])
			}
		case "defaults":
			dm, ok := asMap(m[k])
			if !ok {
				c.problem(path+".defaults", `must be a mapping like {"*": deny}; every persona call under this scope is denied`)
				sc.broken = true
				continue
			}
			for _, dk := range sortedKeys(dm) {
				if dk != "*" {
					c.problem(path+".defaults."+quoteKey(dk), `unknown key; only "*" is read`)
				}
			}
			if star, has := dm["*"]; has {
				sc.defaults = toolLevel{c.ownerLevel(path+`.defaults."*"`, star), rule + ".defaults.*"}
			}
		default:
			c.problem(path+"."+quoteKey(k), "unknown key; it is ignored (allowed: tools, defaults)")
		}
	}
	return sc
}

// compileOwnerTool compiles owner_scopes.<channel>.<principal>.tools.<tool>.
func (c *compiler) compileOwnerTool(path, rule string, v any) *ownerTool {
	t := &ownerTool{rule: rule}
	if s, isStr := v.(string); isStr {
		t.star = toolLevel{c.ownerLevel(path, s), rule}
		return t
	}
	m, ok := asMap(v)
	if !ok {
		c.problem(path, "must be a level or a mapping with patterns and \"*\", got %s; the tool is denied under this scope", describe(v))
		t.broken = true
		return t
	}
	for _, k := range sortedKeys(m) {
		switch k {
		case "*":
			t.star = toolLevel{c.ownerLevel(path+`."*"`, m[k]), rule + ".*"}
		case "patterns":
			pm, ok := asMap(m[k])
			if !ok {
				c.problem(path+".patterns", "must be a mapping of pattern to level; the tool is denied under this scope")
				t.broken = true
				continue
			}
			for _, pat := range sortedKeys(pm) {
				if p, ok := c.compileOwnerPattern(path+".patterns["+quotePattern(pat)+"]", rule+".patterns['"+pat+"']", pat, pm[pat]); ok {
					t.patterns = append(t.patterns, p)
				}
			}
		default:
			c.problem(path+"."+quoteKey(k), `unknown key; it is ignored (allowed: patterns, "*")`)
		}
	}
	return t
}

// compileOwnerPattern compiles one patterns entry with the engine's pattern
// syntax (globs and re:). A pattern that does not compile can match
// nothing, as in the reference, whose matcher never raises.
func (c *compiler) compileOwnerPattern(path, rule, pat string, v any) (ownerPattern, bool) {
	lvl := c.ownerLevel(path, v)
	mt, partial, err := compilePattern(pat)
	if err != nil {
		c.problem(path, "%v; the pattern never matches", err)
		return ownerPattern{}, false
	}
	if partial != nil {
		c.problem(path, "%v", partial)
	}
	mt.dropTrees() // owner patterns have no prefilter
	return ownerPattern{m: mt, level: lvl, rule: rule}, true
}

// quotePattern renders a pattern key for a problem path.
func quotePattern(p string) string { return `"` + strings.ReplaceAll(p, `"`, `\"`) + `"` }

// ownerLevel reads an owner-scope level: exactly allow, ask or deny. Any
// other value is reported and reads as deny.
func (c *compiler) ownerLevel(path string, v any) Level {
	if s, ok := v.(string); ok {
		switch s {
		case "allow":
			return Allow
		case "ask":
			return Ask
		case "deny":
			return Deny
		}
	}
	c.problem(path, "invalid owner-scope level %s; allowed: allow, ask, deny (lower case). The entry denies until it is fixed", describe(v))
	return Deny
}
