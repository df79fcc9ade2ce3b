package engine

import (
	"sort"
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// overrideOutcome is step 4 of the tiered policy: the call is allowed by
// every approval override that matches it. matched_rule names them all,
// sorted and joined with +, as for rules (docs/decisions.md):
// tiered_policy:approval_overrides:approval_overrides[a]+approval_overrides[b].
// When any of them is a regex, the allow is still escalated (see escalate):
// the stricter reading when a regex and a glob both match.
func overrideOutcome(ovs []*rule, tr *tracer) outcome {
	out := outcome{level: policy.Allow, fromOverride: true}
	for _, o := range ovs {
		if o.m.isRegex {
			out.regexOverride = true
		}
	}
	if len(ovs) == 1 {
		out.rule = ovs[0].single
		if tr != nil {
			tr.add(Step{Name: "approval_overrides", Result: "allow", Rule: out.rule, Hits: []string{ovs[0].name}, Decisive: true})
		}
		return out
	}
	names := make([]string, len(ovs))
	for i, o := range ovs {
		names[i] = o.name
	}
	sort.Strings(names)
	out.rule = "tiered_policy:approval_overrides:" + strings.Join(names, "+")
	tr.add(Step{Name: "approval_overrides", Result: "allow", Rule: out.rule, Hits: names, Decisive: true})
	return out
}
