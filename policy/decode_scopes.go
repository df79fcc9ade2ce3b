package policy

import "strings"

// external reads permissions.external_directory: a level, or a mapping of
// path prefix to level with "*" (Ask when absent). Whether a key is a
// usable path is the engine's to check.
func (d *decoder) external(v any) ExternalDirs {
	ext := ExternalDirs{Star: Ask}
	switch val := v.(type) {
	case nil:
		return ext
	case string:
		lvl, ok := d.level(PathExternal, val)
		if !ok {
			lvl = Ask
		}
		return ExternalDirs{Fixed: true, Level: lvl, Star: lvl}
	}
	m, ok := asMap(v)
	if !ok {
		d.problem(PathExternal, "must be a level or a mapping of path prefix to level")
		return ext
	}
	for _, k := range sortedKeys(m) {
		lvl, ok := d.level(ExternalKeyPath(k), m[k])
		if !ok {
			continue
		}
		if k == "*" {
			ext.Star, ext.StarSet = lvl, true
			continue
		}
		ext.Keys = append(ext.Keys, ExternalKey{Key: k, Level: lvl})
	}
	return ext
}

// owners reads owner_scopes. A level that is not exactly allow, ask or
// deny makes its entry deny: the reference compares the raw string with
// "allow" and refuses anything else, so no other spelling may grant a
// persona a call (docs/configuration.md#validation reports it; fail closed keeps it safe).
func (d *decoder) owners(v any) OwnerScopes {
	out := OwnerScopes{}
	if v == nil {
		return out
	}
	m, ok := asMap(v)
	if !ok {
		d.problem(PathOwners, "must be a mapping of channel id to {principal user id: scope}; it is ignored, so persona calls get the global level with ask turned into deny")
		return out
	}
	if len(m) == 0 {
		return out
	}
	out.Configured = true
	for _, ch := range sortedKeys(m) {
		path := PathOwners + "." + QuoteKey(ch)
		principals, ok := asMap(m[ch])
		if !ok {
			d.problem(path, "must be a mapping of principal user id to scope (owner_scopes.<channel>.<principal>); it is ignored")
			continue
		}
		if isEarlierShape(MappingOf(principals)) {
			out.Channels = append(out.Channels, OwnerChannel{Channel: ch, Earlier: true})
			d.problem(path, "written in toolgate's earlier shape owner_scopes.<principal>.tools; owner scopes are keyed by channel, then principal: move it under a channel, e.g. owner_scopes.feishu.%s. Until then it is inert and every persona call of principal %q is denied", ch, ch)
			continue
		}
		oc := OwnerChannel{Channel: ch, Principals: make([]OwnerScope, 0, len(principals))}
		for _, pid := range sortedKeys(principals) {
			oc.Principals = append(oc.Principals, d.ownerScope(ch, pid, principals[pid]))
		}
		out.Channels = append(out.Channels, oc)
	}
	return out
}

// isEarlierShape reports whether a channel's mapping is really a scope in
// toolgate's earlier shape (owner_scopes.<principal>: {tools, defaults}).
func isEarlierShape(m Mapping) bool {
	for _, k := range []string{"tools", "defaults"} {
		if v, has := m.Get(k); has {
			if _, isMap := asMap(v.v); isMap {
				return true
			}
		}
	}
	return false
}

// ownerScope reads owner_scopes.<channel>.<principal>.
func (d *decoder) ownerScope(ch, pid string, v any) OwnerScope {
	path := OwnerScopePath(ch, pid)
	sc := OwnerScope{Principal: pid}
	m, ok := asMap(v)
	if !ok {
		d.problem(path, "must be a mapping with tools and/or defaults; every persona call under it is denied")
		sc.Broken = true
		return sc
	}
	for _, k := range sortedKeys(m) {
		switch k {
		case "tools":
			sc.Tools = sortedEntries(d, path+".tools", "must be a mapping of tool name to level or {patterns, \"*\"}; every persona call under this scope is denied", m[k], &sc.Broken,
				func(tool string, v any) OwnerTool { return d.ownerTool(ch, pid, tool, v) })
		case "defaults":
			dm, ok := d.brokenUnlessMapping(path+".defaults", `must be a mapping like {"*": deny}; every persona call under this scope is denied`, m[k], &sc.Broken)
			if !ok {
				continue
			}
			for _, dk := range sortedKeys(dm) {
				if dk != "*" {
					d.problem(path+".defaults."+QuoteKey(dk), `unknown key; only "*" is read`)
				}
			}
			if star, has := dm["*"]; has {
				sc.Defaults = d.ownerLevel(path+`.defaults."*"`, star)
			}
		default:
			d.problem(path+"."+QuoteKey(k), "unknown key; it is ignored (allowed: tools, defaults)")
		}
	}
	return sc
}

// brokenUnlessMapping reads a value of an owner scope that must be a
// mapping; when it is not, the problem is reported at path and the entry
// marked broken (it denies), and ok is false.
func (d *decoder) brokenUnlessMapping(path, problem string, v any, broken *bool) (m map[string]any, ok bool) {
	if m, ok = asMap(v); !ok {
		d.problem(path, "%s", problem)
		*broken = true
	}
	return m, ok
}

// sortedEntries reads a mapping of an owner scope, entry by entry in key
// order, with read. A value that is not a mapping is reported at path and
// marks the entry broken (it denies), and gives nil; a mapping gives a
// non-nil list even when empty, so Map writes {} back as read.
func sortedEntries[T any](d *decoder, path, problem string, v any, broken *bool, read func(key string, v any) T) []T {
	m, ok := d.brokenUnlessMapping(path, problem, v, broken)
	if !ok {
		return nil
	}
	out := make([]T, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, read(k, m[k]))
	}
	return out
}

// ownerTool reads owner_scopes.<channel>.<principal>.tools.<tool>.
func (d *decoder) ownerTool(ch, pid, tool string, v any) OwnerTool {
	path := OwnerToolPath(ch, pid, tool)
	t := OwnerTool{Tool: tool}
	if s, isStr := v.(string); isStr {
		t.Level = d.ownerLevel(path, s)
		return t
	}
	m, ok := asMap(v)
	if !ok {
		d.problem(path, "must be a level or a mapping with patterns and \"*\", got %s; the tool is denied under this scope", Describe(v))
		t.Broken = true
		return t
	}
	for _, k := range sortedKeys(m) {
		switch k {
		case "*":
			t.Level, t.Star = d.ownerLevel(path+`."*"`, m[k]), true
		case "patterns":
			t.Patterns = sortedEntries(d, path+".patterns", "must be a mapping of pattern to level; the tool is denied under this scope", m[k], &t.Broken,
				func(pat string, v any) LegacyPattern {
					return LegacyPattern{Pattern: pat, Level: d.ownerLevel(OwnerPatternPath(ch, pid, tool, pat), v)}
				})
		default:
			d.problem(path+"."+QuoteKey(k), `unknown key; it is ignored (allowed: patterns, "*")`)
		}
	}
	return t
}

// ownerLevel reads an owner-scope level: exactly allow, ask or deny. Any
// other value is reported and reads as deny.
func (d *decoder) ownerLevel(path string, v any) Level {
	if lvl, ok := ownerLevelOf(v); ok {
		return lvl
	}
	d.problem(path, "invalid owner-scope level %s; allowed: allow, ask, deny (lower case). The entry denies until it is fixed", Describe(v))
	return Deny
}

// ownerLevelOf reads an owner-scope level, exactly allow, ask or deny: the
// reference compares the raw string, so no other spelling (not even
// "Allow") is a level here. Both the lenient and the strict decoding use it.
func ownerLevelOf(v any) (Level, bool) {
	s, ok := v.(string)
	if !ok || s != strings.ToLower(strings.TrimSpace(s)) {
		return LevelNone, false // ParseLevel would forgive the spelling
	}
	return ParseLevel(s)
}
