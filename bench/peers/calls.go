package peers

import "github.com/toolgate/toolgate/engine"

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

// Shape is one call shape of the side-by-side and the level toolgate gives
// it at every policy size.
type Shape struct {
	Name string
	Call Call
	Want engine.Level
}

// Shapes are the call shapes measured: one decided by each kind of rule,
// one no rule matches (the tool level decides), a path tool call inside
// and outside the workspace, and one a generated path rule matches outside
// the workspace.
var Shapes = []Shape{
	{"allow_match", Call{"bash", map[string]any{"command": "make deploy --fast"}}, engine.Allow},
	{"ask_match", Call{"bash", map[string]any{"command": "git push origin main"}}, engine.Ask},
	{"deny_match", Call{"bash", map[string]any{"command": "kubectl delete pod web-1"}}, engine.Deny},
	{"no_match", Call{"bash", map[string]any{"command": "npm run build --silent"}}, engine.Ask},
	{"path_inside", Call{"read_file", map[string]any{"path": Workspace + "/src/main.go"}}, engine.Allow},
	{"path_outside", Call{"read_file", map[string]any{"path": "/etc/hosts"}}, engine.Ask},
	{"path_rule", Call{"write_file", map[string]any{"path": "/srv/proj3/notes.txt"}}, pathRuleWant()},
}

// pathRuleWant is the level of a write under /srv/proj3: the generated
// rule gen_3 ("/srv/proj3/**", the same at every size from 7 rules) and
// the ask for a path outside the workspace, the stricter of the two.
func pathRuleWant() engine.Level {
	r := Rules(len(headRules) + 4)[len(headRules)+3]
	if r.Pattern != "/srv/proj3/**" {
		panic("gen_3 is not the /srv/proj3 rule: " + r.Pattern)
	}
	return max(r.Action, engine.Ask)
}
