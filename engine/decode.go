package engine

import "github.com/toolgate/toolgate/policy"

// The policy's keys and values are decoded by the policy package
// (policy.DecodeSection); the engine compiles the typed result. What is
// left here is a small helper the decision code shares with it.

// quoteKey renders a map key for a message as problem paths render it.
func quoteKey(k string) string { return policy.QuoteKey(k) }
