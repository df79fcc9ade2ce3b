package engine

import (
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// DefaultDenyGuidance is the deny_guidance_message used when the policy
// sets none (docs/decisions.md#digital-persona-and-owner-scopes).
const DefaultDenyGuidance = "该工具未被授权使用。请在 Web 管理页面配置工具权限。"

// PermissionDeniedPrefix starts the reason of every persona denial.
const PermissionDeniedPrefix = "[PERMISSION_DENIED] "

// NoPrincipalReason is the reason of a persona call without a principal.
const NoPrincipalReason = PermissionDeniedPrefix + "数字分身未配置 my_user_id，无法确定权限 owner，所有工具调用被拒绝。"

// RuleNoPrincipal is the matched_rule of a persona call without a principal.
const RuleNoPrincipal = "owner_scopes:no_principal"

// Persona reports whether the scope marks a digital-persona call: both
// avatar_mode and group_digital_avatar are true (docs/decisions.md). Every other
// call, with or without a scope, takes the ordinary path.
func (s *Scope) Persona() bool { return s != nil && s.AvatarMode && s.GroupDigitalAvatar }

// GuidanceMessage returns the deny_guidance_message in force: the policy's,
// or DefaultDenyGuidance.
func (e *Engine) GuidanceMessage() string {
	if e.policy.guidance != "" {
		return e.policy.guidance
	}
	return DefaultDenyGuidance
}

// evaluatePersona decides a digital-persona call (docs/decisions.md#digital-persona-and-owner-scopes). Channel
// gating and the master switch do not apply: personas live in IM group
// chats such as feishu or dingtalk. The owner level of
// owner_scopes.<channel>.<principal> and the global level (the ordinary
// decision, escalation and the external-directory merge included) are
// merged strictest; ask becomes deny, since nobody is there to answer.
//
// A policy with no configuration for the call (the ordinary path's
// fallback, rule "default") gives no global level, as the contract says:
// then the owner level alone decides, and with neither the call is denied.
// This is the one place a persona call can be looser than the same call on
// a checked channel: the owner configured the tool, the global policy did
// not. Where the contract leaves room, toolgate takes the stricter reading:
//   - matched_rule names the owner-scope entry when it is at least as
//     strict as the global level, else the global rule.
func (e *Engine) evaluatePersona(req *Request, tr *tracer) Decision {
	tr.add(Step{Name: "persona", Result: "persona", Detail: "scope.avatar_mode and scope.group_digital_avatar are true: a digital-persona call; channel gating and the master switch do not apply"})
	principal := strings.TrimSpace(req.Scope.PrincipalUserID)
	if principal == "" {
		tr.add(Step{Name: "persona_decision", Result: "deny", Rule: RuleNoPrincipal, Detail: "no principal_user_id: the owner is unknown, every call is denied", Decisive: true})
		return Decision{Level: policy.Deny, MatchedRule: RuleNoPrincipal, Reason: NoPrincipalReason, Trace: tr.finish()}
	}
	channel := strings.TrimSpace(req.ChannelID)
	call := ownerCall{e: e, req: req}
	owner, why := e.policy.owners.lookup(channel, principal, &call)
	if tr != nil {
		tr.add(Step{Name: "owner_level", Result: levelWords[owner.level], Rule: owner.rule, Detail: why})
	}

	g := e.evaluatePolicy(req, tr)
	global := toolLevel{g.Level, g.MatchedRule}
	if g.MatchedRule == ruleNoConfig {
		global = toolLevel{policy.LevelNone, ""}
	}
	if tr != nil {
		detail := "the ordinary decision without channel gating or the master switch"
		if !global.set() {
			detail = "no configuration applies to the call: there is no global level"
		}
		tr.add(Step{Name: "global_level", Result: levelWords[global.level], Rule: global.rule, Detail: detail})
	}

	final, by := combinePersona(owner, global)
	d := Decision{Level: final.level, MatchedRule: final.rule, ExternalPaths: g.ExternalPaths}
	if final.level == policy.Ask {
		d.Level = policy.Deny
		by += "; ask becomes deny: nobody is there to answer"
	}
	if d.Level == policy.Allow {
		d.Reason = "Allowed by rule: " + d.MatchedRule
		d.FromOverride = g.FromOverride && final.rule == g.MatchedRule
	} else {
		d.Reason = PermissionDeniedPrefix + e.GuidanceMessage()
	}
	tr.add(Step{Name: "persona_decision", Result: levelWords[d.Level], Rule: d.MatchedRule, Detail: by, Decisive: true})
	d.Trace = tr.finish()
	return d
}

// ruleNoConfig is the matched_rule of the ordinary path when no
// configuration applies to a call.
const ruleNoConfig = "default"

// combinePersona is the stricter of the owner and global levels that exist
// (docs/decisions.md); with neither, the call is denied under rule "default".
func combinePersona(owner, global toolLevel) (toolLevel, string) {
	switch {
	case !owner.set() && !global.set():
		return toolLevel{policy.Deny, ruleNoConfig}, "neither an owner level nor a global level exists: denied"
	case !global.set():
		return owner, "the owner level decides (the policy has no configuration for the call)"
	case owner.set() && owner.level >= global.level:
		return owner, "the owner level decides"
	}
	return global, "the global level decides"
}

// lookup finds the owner level of a call (docs/decisions.md), first match wins: a
// matching patterns entry of the tool, then the tool's "*" or plain level,
// then defaults."*". The zero toolLevel means none. why says, for the
// explain trace, where the level came from.
func (o *ownerScopes) lookup(channel, principal string, c *ownerCall) (lvl toolLevel, why string) {
	if !o.configured {
		return toolLevel{}, "no owner_scopes are configured: the global level decides, with ask turned into deny (docs/decisions.md#digital-persona-and-owner-scopes)"
	}
	if rule, ok := o.earlier[principal]; ok {
		return toolLevel{policy.Deny, rule}, rule + " is written in toolgate's earlier shape (owner_scopes.<principal>.tools): denied until it is moved under a channel"
	}
	sc := o.scopes[ownerKey{channel: channel, principal: principal}]
	if sc == nil {
		return toolLevel{}, "no owner scope for channel " + policy.QuoteKey(channel) + " and principal " + policy.QuoteKey(principal)
	}
	if sc.broken {
		return toolLevel{policy.Deny, sc.rule}, "the owner scope is malformed: denied"
	}
	if t := sc.tools[c.req.Call.Tool()]; t != nil {
		if t.broken {
			return toolLevel{policy.Deny, t.rule}, "the tool's owner-scope entry is malformed: denied"
		}
		if p := t.match(c); p != nil {
			return toolLevel{p.level, p.rule}, "a pattern of the tool matched"
		}
		if t.star.set() {
			return t.star, "the tool's level"
		}
	}
	if sc.defaults.set() {
		return sc.defaults, "the scope's defaults"
	}
	return toolLevel{}, "the owner scope sets no level for this tool"
}

// match returns the matching pattern of the tool, or nil. The reference
// takes the first match in the file's order, which a decoded mapping does
// not keep; toolgate takes the strictest match (ties: the first pattern in
// sorted order), which is never looser.
func (t *ownerTool) match(c *ownerCall) *ownerPattern {
	var best *ownerPattern
	for i := range t.patterns {
		p := &t.patterns[i]
		if best != nil && p.level <= best.level {
			continue
		}
		if c.matches(p) {
			best = p
		}
	}
	return best
}
