package engine

import (
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/engine/glob"
	"github.com/toolgate/toolgate/engine/shell"
	"github.com/toolgate/toolgate/policy"
)

// outcome is a level and the matched_rule that produced it.
type outcome struct {
	level        policy.Level
	rule         string
	fromOverride bool
	// byRule marks a level that a rule or pattern gave (not a tool level or
	// a default): an allow rule never allows a command the
	// analysis cannot show harmless (docs/decisions.md#shell-escalation).
	byRule bool
	// regexOverride marks an override whose pattern is a regex: it may match
	// a chained command the person never saw, so it is still escalated.
	regexOverride bool
}

// Evaluate decides one tool call: the master switch, the channel set, the
// tiered policy (docs/decisions.md#the-order-of-the-steps) or the legacy checker, shell-operator escalation
// and the external-directory merge (docs/decisions.md#the-order-of-the-steps). A digital-persona call is
// decided under owner scopes instead (evaluatePersona, docs/decisions.md#digital-persona-and-owner-scopes).
func (e *Engine) Evaluate(req *Request) Decision {
	p := e.policy
	var tr *tracer
	if req.Explain {
		tr = &tracer{}
	}
	if req.Scope.Persona() {
		return e.evaluatePersona(req, tr)
	}
	if !p.enabled {
		tr.add(Step{Name: "enabled", Result: "allow", Detail: "permissions.enabled is false", Decisive: true})
		return Decision{Level: policy.Allow, Reason: "Permission system is disabled", Trace: tr.steps()}
	}
	if !p.channels[channelKey(req.ChannelID)] {
		tr.add(Step{Name: "channel", Result: "allow", Detail: "channel " + req.ChannelID + " is not checked", Decisive: true})
		return Decision{Level: policy.Allow, Reason: SkippedReasonPrefix + req.ChannelID, Trace: tr.steps()}
	}
	d := e.evaluatePolicy(req, tr)
	d.Trace = tr.finish()
	return d
}

// evaluatePolicy is the ordinary decision of a call without channel gating
// or the master switch: the policy, escalation and the external merge.
func (e *Engine) evaluatePolicy(req *Request, tr *tracer) Decision {
	p := e.policy
	tool := req.Call.Tool()
	var vals callValues
	vals.category = ToolCategory(tool)
	var buf []string
	if vals.category == CategoryPath {
		// A pooled buffer: any buffer reachable from vals escapes, because
		// matching leaks the command (escape analysis is not per field).
		pooled := pathValueBufs.Get().(*[]string)
		buf = (*pooled)[:0]
		defer func() { releasePathValues(pooled, vals.paths) }()
	}
	e.fillValues(&vals, req, buf)
	var sh *shell.Analysis
	var plain shell.PlainReading
	if vals.category == CategoryShell {
		plain = shell.Classify(vals.command)
	}
	if plain.Full {
		sh = shell.AnalyzeEnvRef(vals.command, e.shellEnv(req))
		vals.norms = sh.Normalized
		tr.shell(sh)
	}
	// A call whose one argument is its command names no working directory.
	workdir := vals.category == CategoryShell && (len(req.Call.Args()) > 1 || vals.command == "") && req.Call.HasWorkdir()
	vals.ctx = overrideCtx{e: e, req: req, sh: sh, workdir: workdir} // override.go
	e.addResolvedNorms(&vals)                                        // paths_norms.go
	vals.windows = vals.category == CategoryShell && e.windowsWorkspace(req) && hasUpper(vals.command)
	vals.readings = vals.windows || plain.Launch || e.hasReadings(&vals, sh)
	vals.tailsOnly = plain.TailsOnly

	var d Decision
	if len(vals.norms) == 0 && !vals.readings {
		d = e.ruleDecision(tool, &vals, sh, tr)
	} else {
		d = e.normalizedDecision(tool, &vals, sh, tr)
	}
	d = e.unreadInputDecision(tool, &vals, sh, d, tr) // unread.go
	unreadScriptDecision(&d, sh, tr)                  // unread.go
	e.mergeExternal(&d, req, vals.category, vals.command, sh, &vals.ctx, tr)
	d.Reason = p.reason(d.Level, tool, d.MatchedRule)
	return d
}

// hasReadings reports whether a call has stricter readings than its values
// as written besides launch readings (shell.Classify): a shell call that
// needed the full analysis, or a value with a character that a glob's *
// matches only in a deny or ask rule.
func (e *Engine) hasReadings(v *callValues, sh *shell.Analysis) bool {
	switch v.category {
	case CategoryShell:
		return sh != nil || glob.OutsideClass(v.command)
	case CategoryPath:
		for _, p := range v.paths {
			if glob.OutsideClass(p) {
				return true
			}
		}
	}
	return false
}

// causeOf names what set an outcome's level (Decision.Cause).
func causeOf(out outcome) string {
	switch {
	case out.byRule || out.fromOverride:
		return CauseRule
	case strings.HasPrefix(out.rule, "tools.") || strings.HasPrefix(out.rule, "tiered_policy:tools."):
		return CauseToolLevel
	}
	return CauseDefault
}

// hasUpper reports whether s has an upper-case ASCII letter.
func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// windowsWorkspace reports whether the call's workspace is a Windows path
// (a drive letter), where program names compare case-insensitively.
func (e *Engine) windowsWorkspace(req *Request) bool {
	ws := req.Workspace
	if ws == "" {
		ws = e.opts.Workspace
	}
	return shell.HasDriveLetter(slashes(strings.TrimSpace(ws)))
}

// ruleDecision is the policy's decision (tiered or legacy) with the shell
// escalation.
func (e *Engine) ruleDecision(tool string, v *callValues, sh *shell.Analysis, tr *tracer) Decision {
	var out outcome
	if e.policy.tiered {
		out = e.evalTiered(tool, v, tr)
	} else {
		out = e.evalLegacy(tool, v, tr)
	}
	d := Decision{Level: out.level, MatchedRule: out.rule, FromOverride: out.fromOverride, Cause: causeOf(out)}
	if v.category == CategoryShell {
		e.escalate(&d, v.command, sh, out, tr)
		if v.readingsCut && d.Level == policy.Allow {
			d.Level, d.Cause = policy.Ask, CauseEscalation
			tr.add(Step{Name: "escalation", Result: "ask", Detail: "a command has more words that may name a program than toolgate reads", Decisive: true})
		}
	}
	return d
}

// normalizedDecision decides a shell call that has normalized commands
// (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm): ask and deny rules also match them, and their hits are
// taken only when they make the decision stricter than the reference's
// matching of the raw text, so that a call the reference already decides at
// that level keeps the reference's matched_rule.
func (e *Engine) normalizedDecision(tool string, v *callValues, sh *shell.Analysis, tr *tracer) Decision {
	norms, readings := v.norms, v.readings
	v.normAdded = false
	strict := e.ruleDecision(tool, v, sh, nil)
	if !v.normAdded {
		// No normalized command added a hit: this is the reference's
		// decision.
		if tr == nil {
			return strict
		}
		v.norms, v.readings = nil, false
		return e.ruleDecision(tool, v, sh, tr)
	}
	v.norms, v.readings = nil, false
	ref := e.ruleDecision(tool, v, sh, nil)
	v.norms, v.readings = norms, readings
	if strict.Level <= ref.Level {
		v.norms, v.readings = nil, false
		if tr == nil {
			return ref
		}
		return e.ruleDecision(tool, v, sh, tr)
	}
	if tr == nil {
		return strict
	}
	tr.add(Step{Name: "normalized", Result: levelWords[strict.Level], Detail: "a normalized command (" +
		showUnknown(strings.Join(norms, " | ")) + ") matches a stricter rule than the command as written"})
	return e.ruleDecision(tool, v, sh, tr)
}

// channelKey normalizes a channel id; an empty channel counts as web.
// SkippedReasonPrefix starts the reason of a call on a channel the policy
// does not check.
const SkippedReasonPrefix = "Skipped for channel: "

// ChecksChannel reports whether the policy checks calls on a channel; a
// call on any other is allowed with "Skipped for channel".
func (e *Engine) ChecksChannel(ch string) bool {
	return e.policy.channels[channelKey(ch)]
}

// ChannelKey is the form a channel is compared in: lower case, trimmed,
// empty meaning web.
func ChannelKey(ch string) string { return channelKey(ch) }

func channelKey(ch string) string {
	if ch == "" {
		return "web"
	}
	for i := 0; i < len(ch); i++ {
		c := ch[i]
		if c >= 'A' && c <= 'Z' || c == ' ' || c == '\t' {
			return strings.ToLower(strings.TrimSpace(ch))
		}
	}
	return ch
}

// fillValues extracts what rules match: the command of a shell tool, the
// path values (and their home expansions) of a path tool, appended to buf.
func (e *Engine) fillValues(v *callValues, req *Request, buf []string) {
	switch v.category {
	case CategoryShell:
		v.command = req.Call.Command()
		v.slashed = slashes(v.command)
	case CategoryPath:
		v.paths = appendPathValues(buf, &req.Call, e.home(req))
	}
}

// evalTiered is evaluate_tiered_policy (docs/decisions.md#the-order-of-the-steps).
func (e *Engine) evalTiered(tool string, v *callValues, tr *tracer) outcome {
	p := e.policy
	bl := p.tools[tool]
	if tr != nil { // the Detail concatenation would allocate on every call
		tr.add(Step{Name: "baseline", Result: levelWords[bl.level], Rule: bl.rule, Detail: "permissions.tools." + tool})
	}
	if bl.level == policy.Deny {
		tr.decide()
		return outcome{level: policy.Deny, rule: bl.rule}
	}
	var bbuf, ubuf [8]*rule
	var marks tailMarks  // the command's candidates for its tails (index_readings.go)
	var list readingList // the launch readings, found once for both sets of rules
	builtinHits := p.builtin.collectAll(tool, v, bbuf[:0], &marks, &list)
	tr.hits("builtin_hits", builtinHits)
	if hasDeny(builtinHits) {
		tr.decide()
		return finalize(builtinHits, "tiered_policy:builtin:")
	}
	userHits := p.user.collectAll(tool, v, ubuf[:0], &marks, &list)
	tr.hits("user_hits", userHits)
	if hasDeny(userHits) {
		tr.decide()
		return finalize(userHits, "tiered_policy:rules:")
	}
	var obuf [8]*rule
	if ovs := p.overrides.collectWithin(tool, v, obuf[:0]); len(ovs) > 0 {
		out := overrideOutcome(ovs, tr)
		out.byRule = true
		return out
	}
	tr.add(Step{Name: "approval_overrides", Detail: "no override matched"})
	if out, ok := e.grantOutcome(tool, v, tr); ok {
		return out
	}
	if len(builtinHits) > 0 {
		out := finalize(builtinHits, "tiered_policy:builtin:")
		tr.add(Step{Name: "finalize", Result: levelWords[out.level], Rule: out.rule, Detail: "built-in hits decide; user hits are not merged", Decisive: true})
		return out
	}
	if len(userHits) > 0 {
		out := finalize(userHits, "tiered_policy:rules:")
		tr.add(Step{Name: "finalize", Result: levelWords[out.level], Rule: out.rule, Detail: "user hits decide", Decisive: true})
		return out
	}
	if bl.set() {
		tr.add(Step{Name: "tool_level", Result: levelWords[bl.level], Rule: bl.rule, Decisive: true})
		return outcome{level: bl.level, rule: bl.rule}
	}
	if p.defaults.set() {
		tr.add(Step{Name: "defaults", Result: levelWords[p.defaults.level], Rule: p.defaults.rule, Decisive: true})
		return outcome{level: p.defaults.level, rule: p.defaults.rule}
	}
	tr.add(Step{Name: "fallback", Result: "ask", Rule: "default", Detail: "no configuration applies", Decisive: true})
	return outcome{level: policy.Ask, rule: "default"}
}

func hasDeny(hits []*rule) bool {
	for _, h := range hits {
		if h.level == policy.Deny {
			return true
		}
	}
	return false
}

// finalize is _finalize_hits: any deny wins; else the strictest level. The
// names of the hits at the winning level are joined with + in sorted order.
func finalize(hits []*rule, base string) outcome {
	win := policy.Allow
	for _, h := range hits {
		win = max(win, h.level)
	}
	var only *rule
	count := 0
	for _, h := range hits {
		if h.level == win {
			only = h
			count++
		}
	}
	if count == 1 {
		// only.level is win: a deny rule's single already says deny:.
		return outcome{level: win, rule: only.single, byRule: true}
	}
	names := make([]string, 0, count)
	for _, h := range hits {
		if h.level == win {
			names = append(names, h.name)
		}
	}
	sort.Strings(names)
	prefix := base
	if win == policy.Deny {
		prefix += "deny:"
	}
	return outcome{level: win, rule: prefix + strings.Join(names, "+"), byRule: true}
}

// evalLegacy is the tool-level checker of the legacy schema (docs/decisions.md):
// tools.<t>.patterns (strictest match), then tools.<t>.* or tools.<t>, then
// defaults.*; any deny among these wins, else the first that applies.
func (e *Engine) evalLegacy(tool string, v *callValues, tr *tracer) outcome {
	out := e.policy.legacyOutcome(tool, v, tr)
	if out.level != policy.Ask {
		return out
	}
	// The legacy schema has no override step: a grant answers the ask it
	// would have put to a person (docs/grants.md).
	if g, ok := e.grantOutcome(tool, v, tr); ok {
		return g
	}
	return out
}

// legacyOutcome is evalLegacy without grants.
func (p *compiledPolicy) legacyOutcome(tool string, v *callValues, tr *tracer) outcome {
	var cands [3]outcome
	n := 0
	var best *legacyPattern
	for i := range p.legacy[tool] {
		lp := &p.legacy[tool][i]
		raw := legacyMatch(lp, v)
		norm := !raw && lp.level >= policy.Ask && (v.readings && legacyMatchStrict(lp, v) || legacyMatchNormalized(lp, v) || legacyMatchReadings(lp, v))
		if norm {
			v.normAdded = true
		}
		if (raw || norm) && (best == nil || lp.level > best.level) {
			best = lp
		}
	}
	if best != nil {
		cands[n] = outcome{level: best.level, rule: best.rule, byRule: true}
		n++
	}
	if tl, ok := p.tools[tool]; ok {
		cands[n] = outcome{level: tl.level, rule: tl.rule}
		n++
	}
	if p.defaults.set() {
		cands[n] = outcome{level: p.defaults.level, rule: p.defaults.rule}
		n++
	}
	for i := 0; i < n; i++ {
		tr.add(Step{Name: "legacy", Result: levelWords[cands[i].level], Rule: cands[i].rule})
	}
	for i := 0; i < n; i++ {
		if cands[i].level == policy.Deny {
			tr.decideRule(cands[i].rule)
			return cands[i]
		}
	}
	if n > 0 {
		tr.decideRule(cands[0].rule)
		return cands[0]
	}
	tr.add(Step{Name: "fallback", Result: "ask", Rule: "default", Detail: "no configuration applies", Decisive: true})
	return outcome{level: policy.Ask, rule: "default"}
}

func legacyMatch(lp *legacyPattern, v *callValues) bool {
	switch v.category {
	case CategoryShell:
		return lp.m.matchShell(v.command)
	case CategoryPath:
		for _, p := range v.paths {
			if lp.m.matchPath(p) {
				return true
			}
		}
	}
	return false
}

// legacyMatchStrict is legacyMatch with a deny or ask glob's * and ?
// matching any character (docs/decisions.md#deny-globs-match-any-character).
func legacyMatchStrict(lp *legacyPattern, v *callValues) bool {
	switch v.category {
	case CategoryShell:
		return lp.m.matchShellAs(v.command, true)
	case CategoryPath:
		for _, p := range v.paths {
			if lp.m.matchPathAs(p, true) {
				return true
			}
		}
	}
	return false
}

// legacyMatchNormalized reports whether a legacy shell pattern matches a
// normalized command of the call (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm; only for ask and deny).
func legacyMatchNormalized(lp *legacyPattern, v *callValues) bool {
	if v.category != CategoryShell {
		return false
	}
	for _, n := range v.norms {
		if lp.m.matchShellAs(n, true) {
			return true
		}
	}
	return false
}

// legacyMatchReadings reports whether a legacy shell pattern matches a
// launch reading of the call (launch.go; only for ask and deny).
func legacyMatchReadings(lp *legacyPattern, v *callValues) bool {
	if v.category != CategoryShell || !v.readings {
		return false
	}
	hit := false
	v.eachCommand(func(s string, argv []string) {
		shell.LaunchReadings(s, argv, func(r string) { hit = hit || lp.m.matchShellAs(r, true) })
	})
	return hit
}

// escalationRisk reports whether a command holds chaining or injection
// characters: [;&|`<>], $( or ${, or a newline (docs/decisions.md).
func escalationRisk(cmd string) bool {
	if strings.ContainsAny(cmd, ";&|`<>\n") {
		return true
	}
	i := strings.IndexByte(cmd, '$')
	for i >= 0 && i+1 < len(cmd) {
		if cmd[i+1] == '(' || cmd[i+1] == '{' {
			return true
		}
		j := strings.IndexByte(cmd[i+1:], '$')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// escalate turns an allow into ask when the command is risky. An allow from
// an allow rule or an override never stands for an opaque command: one whose
// command name is not known statically, or whose script text is nested
// beyond shell.MaxReparseDepth (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm). Otherwise: operator characters, or a
// script that does not parse (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm). An allow from an approval
// override is exempt from those (docs/decisions.md#the-order-of-the-steps), unless the override is a regex
// (such as /add-dir's re:.*<dir>.*), which can match a command chained onto
// the one the person approved: toolgate escalates those too.
func (e *Engine) escalate(d *Decision, cmd string, sh *shell.Analysis, out outcome, tr *tracer) {
	if d.Level != policy.Allow {
		return
	}
	if sh != nil && out.byRule && sh.Opaque() {
		d.Level, d.Cause = policy.Ask, CauseEscalation
		tr.add(Step{Name: "escalation", Result: "ask", Detail: opaqueDetail(sh), Decisive: true})
		return
	}
	if out.fromOverride && !out.regexOverride {
		return
	}
	if escalationRisk(cmd) {
		d.Level, d.Cause = policy.Ask, CauseEscalation
		tr.add(Step{Name: "escalation", Result: "ask", Detail: "shell operators in the command turn allow into ask", Decisive: true})
	} else if sh != nil && !sh.Parsed {
		d.Level, d.Cause = policy.Ask, CauseEscalation
		tr.add(Step{Name: "escalation", Result: "ask", Detail: "the command does not parse as a shell script", Decisive: true})
	} else if use, risky := e.policy.riskyUnderAllowRule(d.MatchedRule, cmd, sh); risky {
		d.Level, d.Cause = policy.Ask, CauseEscalation // an allow rule's command writes files or runs programs (riskyopts.go)
		traceRisky(tr, use)
	}
}

// opaqueDetail says why an opaque command is not allowed by a rule.
func opaqueDetail(sh *shell.Analysis) string {
	if sh.TooDeep {
		return "script text is nested deeper than toolgate reads it (" + strconv.Itoa(shell.MaxReparseDepth) + " shells), so an allow rule or override does not apply"
	}
	return "a command name is not known before the command runs (a variable, a substitution or text from a pipe), so an allow rule or override does not apply"
}

// shellEnv is what the shell analysis knows of the call's environment: the
// server user's home and the command's working directory (the workdir
// argument against the workspace, cleaned but not resolved: $PWD is the
// logical path, which the external check resolves).
func (e *Engine) shellEnv(req *Request) shell.Env {
	env := shell.Env{Home: e.home(req)}
	ws := req.Workspace
	if ws == "" {
		ws = e.opts.Workspace
	}
	ws = slashes(strings.TrimSpace(ws))
	dir := ws
	if wd := req.Call.Workdir(); wd != "" {
		wd = slashes(shell.ExpandHome(wd, e.home(req)))
		switch {
		case strings.HasPrefix(wd, "/") || shell.HasDriveLetter(wd):
			dir = wd
		case ws != "":
			dir = ws + "/" + wd
		default:
			dir = ""
		}
	}
	if strings.HasPrefix(dir, "/") {
		dir = path.Clean(dir)
	} else if !shell.HasDriveLetter(dir) {
		dir = ""
	}
	env.Dir = dir
	return env
}

// reason formats the reason of a decision (docs/decisions.md).
func (p *compiledPolicy) reason(l policy.Level, tool, rule string) string {
	key := reasonKey{level: l, rule: rule}
	if l == policy.Ask {
		key.tool = tool
	}
	if r, ok := p.reasons[key]; ok {
		return r
	}
	return p.hitReasons.reason(key)
}

// formatReason builds a reason string.
func formatReason(l policy.Level, tool, rule string) string {
	switch l {
	case policy.Allow:
		return "Allowed by rule: " + rule
	case policy.Deny:
		return "Denied by rule: " + rule
	}
	return askReason(tool, rule)
}

func askReason(tool, rule string) string {
	return "Approval required for " + tool + " (rule: " + rule + ")"
}

// home is the home directory that ~ and $HOME name in a call: the agent's,
// when the request carries it, else the server user's.
func (e *Engine) home(req *Request) string {
	if req.Home != "" {
		return req.Home
	}
	return e.opts.HomeDir
}
