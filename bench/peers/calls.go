package peers

import (
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// Call is one tool call: the tool's name and its arguments, as an agent
// sends them.
type Call struct {
	Tool string
	Args map[string]any
}

// value is what the rules of the call's tool match: the command or the path.
func (c *Call) value() string {
	key := "path"
	if isShell(c.Tool) {
		key = "command"
	}
	s, _ := c.Args[key].(string)
	return s
}

// Shape is one call shape of the side-by-side, the level toolgate gives it
// at every policy size and what sets that level in toolgate (a rule, the
// tool's level, the workspace: engine.Cause*), so that a cell measures the
// path it names.
type Shape struct {
	Name  string
	Call  Call
	Want  policy.Level
	Cause string
}

// Shapes are the call shapes measured: one decided by each kind of rule,
// one no rule matches (the tool level decides), a path tool call inside
// and outside the workspace, and one a generated path rule matches outside
// the workspace.
var Shapes = []Shape{
	{"allow_match", Call{"bash", map[string]any{"command": "make deploy --fast"}}, policy.Allow, engine.CauseRule},
	{"ask_match", Call{"bash", map[string]any{"command": "git push origin main"}}, policy.Ask, engine.CauseRule},
	{"deny_match", Call{"bash", map[string]any{"command": "kubectl delete pod web-1"}}, policy.Deny, engine.CauseRule},
	{"no_match", Call{"bash", map[string]any{"command": "npm run build --silent"}}, policy.Ask, engine.CauseToolLevel},
	{"path_inside", Call{"read_file", map[string]any{"path": Workspace + "/src/main.go"}}, policy.Allow, engine.CauseToolLevel},
	{"path_outside", Call{"read_file", map[string]any{"path": "/etc/hosts"}}, policy.Ask, engine.CauseExternal},
	// gen_3 allows "/srv/proj3/**" at every size from 7 rules
	// (TestPathRuleShape); the ask for a path outside the workspace wins.
	{"path_rule", Call{"write_file", map[string]any{"path": "/srv/proj3/notes.txt"}}, policy.Ask, engine.CauseExternal},
}
