package store

import (
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// ruleOf is the typed rule a request body decodes to (the edit ports take
// policy.Rule, not the body's mapping).
func ruleOf(m map[string]any) policy.Rule {
	r, _, _ := policy.DecodeRule(m, "rule")
	return r
}

// scopesOf is the typed owner scopes a request body decodes to.
func scopesOf(t *testing.T, m map[string]any) policy.OwnerScopes {
	t.Helper()
	scopes, fe := policy.DecodeOwnerScopesInput(policy.MappingOf(m), engine.ValidatePattern)
	if fe != nil {
		t.Fatalf("owner scopes %v: %v", m, fe)
	}
	return scopes
}
