package importer

import (
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// checkedExamples are the examples of a converted Codex rule that hold in
// toolgate: each is decided by the real engine as the server decides a
// rule's examples when the policy is written (docs/configuration.md#rule-examples).
// One that does not hold is left out and reported, so that it neither
// makes the server refuse the import nor goes missing unsaid: it shows
// where toolgate decides the command otherwise than Codex meant. nil when
// none is left.
func checkedExamples(r *Result, where string, rule Rule, match, noMatch []string, opts Options) *Examples {
	if len(match) == 0 && len(noMatch) == 0 {
		return nil
	}
	pr := policyRule(rule)
	eopts := engine.Options{Workspace: opts.Project, HomeDir: opts.Home}
	keep := func(values []string, want bool, kind, miss string) []string {
		var out []string
		for _, v := range values {
			got, msg := engine.ExampleMatches(pr, v, eopts)
			switch {
			case msg != "":
				r.problem(where, "%s example %q cannot be a toolgate example: %s; left out of the rule's examples", kind, v, msg)
			case got != want:
				r.problem(where, "%s example %q %s in toolgate: the rule %q %s it as a policy of that rule alone decides it; left out of the rule's examples", kind, v, miss, rule.Pattern, miss)
			default:
				out = append(out, v)
			}
		}
		return out
	}
	x := &Examples{
		Match:   keep(match, true, "match", "does not match"),
		NoMatch: keep(noMatch, false, "not_match", "matches"),
	}
	if len(x.Match) == 0 && len(x.NoMatch) == 0 {
		return nil
	}
	return x
}

// policyRule is the rule as the engine reads it.
func policyRule(r Rule) *policy.Rule {
	level, _ := policy.ParseLevel(r.Action)
	return &policy.Rule{ID: r.ID, Tools: r.Tools, Pattern: r.Pattern, MatchType: r.MatchType, Action: level}
}
