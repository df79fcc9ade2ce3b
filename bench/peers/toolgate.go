package peers

import (
	"fmt"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// toolgateEngine is toolgate's engine with the shared policy and no
// built-in rules, so that it decides what the peers decide.
type toolgateEngine struct{ e *engine.Engine }

// NewToolgate compiles rules as the permissions section of config.yaml:
// the tiered policy, the tool levels, an external-directory level of ask
// and the rules; no built-in rules. Paths resolve to themselves (no lstat),
// as the peers touch no filesystem either.
func NewToolgate(rules []Rule) (Engine, error) {
	user := make([]any, len(rules))
	for i, r := range rules {
		tools := make([]any, len(r.Tools))
		for j, t := range r.Tools {
			tools[j] = t
		}
		user[i] = map[string]any{"id": r.ID, "tools": tools, "pattern": r.Pattern, "action": r.Action.String()}
	}
	levels := map[string]any{}
	for t, l := range toolLevels {
		levels[t] = l.String()
	}
	perms := map[string]any{
		"enabled":            true,
		"schema":             "tiered_policy",
		"permission_mode":    "normal",
		"defaults":           map[string]any{"*": defaultLevel.String()},
		"tools":              levels,
		"rules":              user,
		"external_directory": map[string]any{"*": "ask"},
	}
	e, problems := engine.Compile(perms, nil, engine.Options{Workspace: Workspace, HomeDir: "/home/u",
		ResolvePath: func(p string) string { return p }})
	if len(problems) > 0 {
		return nil, fmt.Errorf("toolgate policy: %d problems, first %v", len(problems), problems[0])
	}
	return toolgateEngine{e}, nil
}

// Name is "toolgate".
func (t toolgateEngine) Name() string { return "toolgate" }

// Bind builds the engine's Request once; Evaluate does the rest.
func (t toolgateEngine) Bind(c Call) func() policy.Level {
	req := &engine.Request{Call: engine.NewCall(c.Tool, c.Args)}
	return func() policy.Level { return t.e.Evaluate(req).Level }
}
