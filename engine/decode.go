package engine

import (
	"maps"
	"slices"

	"github.com/toolgate/toolgate/policy"
)

// The policy's keys and values are decoded by the policy package
// (policy.DecodeSection); the engine compiles the typed result. What is
// left here are two small helpers the decision code shares with it.

// sortedKeys returns the keys of m in order, so a walk is deterministic.
func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// quoteKey renders a map key for a message as problem paths render it.
func quoteKey(k string) string { return policy.QuoteKey(k) }
