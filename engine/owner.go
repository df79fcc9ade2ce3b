package engine

import "strings"

// ownerScope is the compiled owner scope of one principal: tool levels and a
// default, merged strictest with the global decision (contract D3).
type ownerScope struct {
	principal string
	tools     map[string]toolLevel
	defaults  toolLevel
}

// compileOwners reads owner_scopes: {<principal_user_id>: {tools: {<tool>:
// level}, defaults: {"*": level}}}.
func (c *compiler) compileOwners(v any) map[string]ownerScope {
	if v == nil {
		return nil
	}
	m, ok := asMap(v)
	if !ok {
		c.problem("permissions.owner_scopes", "must be a mapping of principal user id to scope")
		return nil
	}
	out := make(map[string]ownerScope, len(m))
	for _, pid := range sortedKeys(m) {
		path := "permissions.owner_scopes." + quoteKey(pid)
		sm, ok := asMap(m[pid])
		if !ok {
			c.problem(path, "must be a mapping with tools and/or defaults")
			continue
		}
		scope := ownerScope{principal: pid, tools: map[string]toolLevel{}}
		prefix := "owner_scopes[" + pid + "]"
		if tv, has := sm["tools"]; has {
			if tm, ok := asMap(tv); ok {
				for _, t := range sortedKeys(tm) {
					if lvl, ok := c.level(path+".tools."+quoteKey(t), tm[t]); ok {
						scope.tools[t] = toolLevel{lvl, prefix + ".tools." + t}
					}
				}
			} else {
				c.problem(path+".tools", "must be a mapping of tool name to level")
			}
		}
		if dv, has := sm["defaults"]; has {
			if dm, ok := asMap(dv); ok {
				if star, has := dm["*"]; has {
					if lvl, ok := c.level(path+`.defaults."*"`, star); ok {
						scope.defaults = toolLevel{lvl, prefix + ".defaults.*"}
					}
				}
			} else {
				c.problem(path+".defaults", `must be a mapping like {"*": ask}`)
			}
		}
		for _, k := range sortedKeys(sm) {
			if k != "tools" && k != "defaults" {
				c.problem(path+"."+quoteKey(k), "unknown key; it is ignored")
			}
		}
		out[pid] = scope
	}
	return out
}

// applyOwnerScope decides a digital-persona call (scope.avatar_mode or
// group_digital_avatar): no principal denies everything; the principal's
// owner scope, if any, is merged strictest; and ask becomes deny, since
// nobody is there to answer (contract D3).
func (e *Engine) applyOwnerScope(d *Decision, req *Request, tr *tracer) (downgraded bool) {
	s := req.Scope
	if s == nil || !(s.AvatarMode || s.GroupDigitalAvatar) {
		return false
	}
	pid := strings.TrimSpace(s.PrincipalUserID)
	if pid == "" {
		d.Level = Deny
		d.MatchedRule = "owner_scopes:no_principal"
		d.FromOverride = false
		tr.add(Step{Name: "owner_scope", Result: "deny", Rule: d.MatchedRule, Detail: "a digital-persona call without principal_user_id is denied", Decisive: true})
		return true
	}
	if scope, ok := e.policy.owners[pid]; ok {
		tl, has := scope.tools[req.ToolName]
		if !has {
			tl = scope.defaults
		}
		if tl.set() && tl.level > d.Level {
			d.Level = tl.level
			d.MatchedRule += "|" + tl.rule
			tr.add(Step{Name: "owner_scope", Result: tl.level.String(), Rule: d.MatchedRule, Detail: "the owner scope of " + pid + " is stricter", Decisive: true})
		}
	}
	if d.Level == Ask {
		d.Level = Deny
		d.MatchedRule += "|owner_scopes:ask_to_deny"
		tr.add(Step{Name: "owner_scope", Result: "deny", Rule: d.MatchedRule, Detail: "ask becomes deny for a digital persona: nobody is there to answer", Decisive: true})
		return true
	}
	return false
}

// GuidanceMessage returns deny_guidance_message, shown with owner-scope denials.
func (e *Engine) GuidanceMessage() string { return e.policy.guidance }
