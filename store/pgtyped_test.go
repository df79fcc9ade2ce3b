package store_test

import "github.com/toolgate/toolgate/policy"

// ruleOf is the typed rule a request body decodes to (the edit ports take
// policy.Rule, not the body's mapping).
func ruleOf(m map[string]any) policy.Rule {
	r, _, _ := policy.DecodeRule(m, "rule")
	return r
}
