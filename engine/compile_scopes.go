package engine

import (
	"sort"
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// compileExternal builds the external-directory check from the decoded
// external_directory: a key must be a path with /, longest prefix first.
func (c *compiler) compileExternal(x *policy.ExternalDirs) extDir {
	if x.Fixed {
		return extDir{fixed: true, level: x.Level, star: x.Level}
	}
	ext := extDir{star: x.Star}
	if ext.star == policy.LevelNone {
		ext.star = policy.Ask
	}
	for _, k := range x.Keys {
		prefix := NormalizeDirKey(k.Key)
		if !strings.Contains(prefix, "/") {
			c.problem(policy.ExternalKeyPath(k.Key), "ignored: a key must be a path with / (a bare drive letter would match a whole drive)")
			continue
		}
		ext.keys = append(ext.keys, extKey{prefix: prefix, raw: k.Key, level: k.Level})
	}
	// Longest prefix first, so the most specific key decides.
	sort.SliceStable(ext.keys, func(i, j int) bool { return len(ext.keys[i].prefix) > len(ext.keys[j].prefix) })
	return ext
}

// compileOwners builds the owner scopes from the decoded owner_scopes.
func (c *compiler) compileOwners(o *policy.OwnerScopes) ownerScopes {
	out := ownerScopes{configured: o.Configured}
	if !o.Configured {
		return out
	}
	out.scopes = map[ownerKey]*ownerScope{}
	for _, ch := range o.Channels {
		if ch.Earlier {
			if out.earlier == nil {
				out.earlier = map[string]string{}
			}
			out.earlier[ch.Channel] = "owner_scopes." + ch.Channel
			continue
		}
		for i := range ch.Principals {
			ps := &ch.Principals[i]
			key := ownerKey{channel: ch.Channel, principal: ps.Principal}
			out.scopes[key] = c.compileOwnerScope(ch.Channel, ps)
		}
	}
	return out
}

// compileOwnerScope compiles owner_scopes.<channel>.<principal>.
func (c *compiler) compileOwnerScope(ch string, ps *policy.OwnerScope) *ownerScope {
	rule := "owner_scopes." + ch + "." + ps.Principal
	sc := &ownerScope{rule: rule, broken: ps.Broken, tools: make(map[string]*ownerTool, len(ps.Tools))}
	for i := range ps.Tools {
		t := &ps.Tools[i]
		sc.tools[t.Tool] = c.compileOwnerTool(ch, ps.Principal, rule+".tools."+t.Tool, t)
	}
	if ps.Defaults != policy.LevelNone {
		sc.defaults = toolLevel{ps.Defaults, rule + ".defaults.*"}
	}
	return sc
}

// compileOwnerTool compiles owner_scopes.<channel>.<principal>.tools.<tool>.
// A pattern that does not compile can match nothing, as in the reference,
// whose matcher never raises.
func (c *compiler) compileOwnerTool(ch, pid, rule string, t *policy.OwnerTool) *ownerTool {
	out := &ownerTool{rule: rule, broken: t.Broken}
	if t.Level != policy.LevelNone {
		out.star = toolLevel{t.Level, rule}
		if t.Star {
			out.star.rule = rule + ".*"
		}
	}
	for _, lp := range t.Patterns {
		mt, partial, err := compilePattern(lp.Pattern)
		path := func() string { return policy.OwnerPatternPath(ch, pid, t.Tool, lp.Pattern) }
		if err != nil {
			c.problem(path(), "%v; the pattern never matches", err)
			continue
		}
		if partial != nil {
			c.problem(path(), "%v", partial)
		}
		mt.dropTrees() // owner patterns have no prefilter
		if lp.Level >= policy.Ask {
			mt.strict()
		}
		out.patterns = append(out.patterns, ownerPattern{m: mt, level: lp.Level, rule: rule + ".patterns['" + lp.Pattern + "']"})
	}
	return out
}
