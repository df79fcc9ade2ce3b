package engine

import "github.com/toolgate/toolgate/policy"

// Engine is a compiled, immutable policy. Build it with Compile; decide with
// Evaluate. It is safe for concurrent use.
type Engine struct {
	opts     Options
	problems []policy.Problem
	policy   *compiledPolicy
	// serverWS is opts.Workspace, cleaned and resolved once.
	serverWS string
	// shadow is the policy with its shadow rules enforced, nil when it
	// has none (shadow.go).
	shadow *Engine
	// grants are the live grants the engine consults, nil when there are
	// none (grants.go).
	grants *GrantSet
}

// Problems returns the validation problems found when the policy was compiled.
func (e *Engine) Problems() []policy.Problem { return e.problems }
