package engine

import "github.com/toolgate/toolgate/policy"

// Shadow rules (docs/configuration.md#shadow-rules): a rule with mode:
// shadow never decides a call. The policy is compiled twice, once without
// its shadow rules (the engine in force, whose Evaluate is what it was
// before: a shadow rule costs a call nothing) and once with them enforced
// (Shadow), which the decision log asks off the request path what each
// call would have got.

// hasShadowRules reports whether any rule of the lists is a shadow rule.
func hasShadowRules(lists ...[]policy.Rule) bool {
	for _, rules := range lists {
		for i := range rules {
			if rules[i].Shadow() {
				return true
			}
		}
	}
	return false
}

// splitShadow returns the rules in force (shadow rules left out) and all
// of them enforced.
func splitShadow(rules []policy.Rule) (live, all []policy.Rule) {
	all = make([]policy.Rule, len(rules))
	live = make([]policy.Rule, 0, len(rules))
	for i, r := range rules {
		if !r.Shadow() {
			l := r
			l.Examples = nil // checked once, in the compile of all the rules
			live = append(live, l)
		}
		r.Mode = ""
		all[i] = r
	}
	return live, all
}

// compileWithShadow compiles the policy in force (shadow rules left out)
// and its shadow (every rule enforced). The problems are the shadow's:
// every rule, shadow rules included, is validated as if enforced, so a
// shadow rule that would not compile is reported before it is enforced.
func compileWithShadow(sec *policy.Section, builtin *policy.Builtin, opts Options) (*Engine, []policy.Problem) {
	all, live := *sec, *sec
	// An approval override in shadow mode is tried the same way: enforcing
	// it because only rules were looked at would allow what its author
	// meant only to watch.
	live.Rules, all.Rules = splitShadow(sec.Rules)
	live.Overrides, all.Overrides = splitShadow(sec.Overrides)
	shadow, problems := compileSection(&all, builtin, opts)
	e, _ := compileSection(&live, builtin, opts)
	e.problems = problems
	e.shadow = shadow
	return e, problems
}

// Shadow returns the engine that decides as the policy would with its
// shadow rules enforced, nil when the policy has none.
func (e *Engine) Shadow() *Engine { return e.shadow }

// ShadowOutcome is what the policy's shadow rules would have made of a
// decision: the level and matched_rule with them enforced, and whether
// that differs from the decision in force (a call they would change).
type ShadowOutcome struct {
	Level       policy.Level
	MatchedRule string
	Changed     bool
}

// ShadowOf decides req with the shadow rules enforced and compares it with
// d, the decision in force; the zero outcome when there are none.
func (e *Engine) ShadowOf(req *Request, d Decision) ShadowOutcome {
	if e.shadow == nil {
		return ShadowOutcome{}
	}
	s := e.shadow.Evaluate(req)
	return ShadowOutcome{Level: s.Level, MatchedRule: s.MatchedRule, Changed: s.Level != d.Level}
}
