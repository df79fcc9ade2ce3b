package peers

import (
	"github.com/toolgate/toolgate/policy"
)

// Engine is one compiled policy of one engine.
type Engine interface {
	// Name names the engine in tables and benchmark names.
	Name() string
	// Bind returns the decision of one call, to be run many times. What
	// Bind does is done once per call shape, like decoding a request
	// body: it shapes the call as the engine takes it (toolgate's
	// Request, OPA's input document). Everything an engine does to decide
	// (finding rules, matching, combining levels) is in the returned
	// function.
	Bind(c Call) func() policy.Level
}

// Compiled is the same policy compiled for each engine, in the order the
// rounds run them, and the seconds each compile took.
type Compiled struct {
	Engines []Engine
	Compile []float64
}
