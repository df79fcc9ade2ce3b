package engine

// compiledPolicy is filled in by Compile.
type compiledPolicy struct{}

// Compile builds an Engine from the decoded `permissions` section of
// config.yaml (nil when the section is absent) and the decoded `rules` list of
// builtin_rules.yaml. Maps may be map[string]any or map[any]any, as JSON and
// YAML decoders produce them. Every problem is returned, each naming its place
// (permissions.rules[3].pattern, builtin_rules[1].severity, ...); a broken
// entry is left out and the rest of the policy still decides (contract D4).
func Compile(perms map[string]any, builtin []any, opts Options) (*Engine, []Problem) {
	return &Engine{opts: opts, policy: &compiledPolicy{}}, nil
}

// Evaluate decides one tool call.
func (e *Engine) Evaluate(req *Request) Decision {
	return Decision{Level: Ask, MatchedRule: "default", Reason: "Approval required for " + req.ToolName + " (rule: default)"}
}

// ValidatePattern reports whether a rule pattern compiles: a glob always
// does; a re: pattern must be RE2 (or, containing |, have alternatives that
// are). An empty pattern is an error.
func ValidatePattern(pattern string) error { return nil }
