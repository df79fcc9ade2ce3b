package peers

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/policy"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
)

// opaModule is the Rego policy, written as an OPA expert writes a policy of
// many rules: the rules are data, not Rego (one module whatever the
// policy's size, so compiling stays cheap and the rules can change without
// a new bundle); they are indexed by tool and by the value's leading parts
// (nested objects, one lookup per depth: OPA's docs make large policies
// fast with object lookups rather than iteration), so one call reads only
// the rules whose literal prefix it has, the same slice Cedar gets;
// glob.match with no delimiters (null) is the glob, * matching any text as
// in toolgate; deny beats ask beats allow, a path outside the workspace is
// at least ask, and no hit falls to the tool's level or the default. The
// store returns AST values (no conversion per read), the query is prepared
// once (PrepareForEval) and each call is one Eval of an input parsed once.
const opaModule = `package toolgate

import rego.v1

value := input.tool_args[data.value_arg[input.tool_name]]

parts := split(value, data.separator[input.tool_name])

# hits are the levels of the rules that match the value. A rule is filed
# under the parts of its pattern before the first glob character (at most
# three): rules0 holds those with none, rules1 by their first part, rules2
# by the first two, rules3 by the first three. Each is one lookup by the
# value's own leading parts, with no loop and no string built.
hits contains r.action if {
	some r in data.rules0[input.tool_name]
	glob.match(r.pattern, null, value)
}

hits contains r.action if {
	some r in data.rules1[input.tool_name][parts[0]]
	glob.match(r.pattern, null, value)
}

hits contains r.action if {
	some r in data.rules2[input.tool_name][parts[0]][parts[1]]
	glob.match(r.pattern, null, value)
}

hits contains r.action if {
	some r in data.rules3[input.tool_name][parts[0]][parts[1]][parts[2]]
	glob.match(r.pattern, null, value)
}

outside if {
	data.path_tools[input.tool_name]
	not startswith(value, data.workspace_prefix)
}

tool_level := data.tools[input.tool_name]

default tool_level := "ask"

decision := "deny" if "deny" in hits
else := "ask" if "ask" in hits
else := "ask" if outside
else := "allow" if "allow" in hits
else := tool_level
`

// opaEngine is the prepared Rego query.
type opaEngine struct{ pq rego.PreparedEvalQuery }

// opaData is the data document: tool levels, the workspace and the rules,
// data.rulesN[tool][part 1]...[part N] = [{id, pattern, action}] for a rule
// whose IndexKey has N parts.
func opaData(rules []Rule) map[string]any {
	var byDepth [maxKeyParts + 1]map[string]any
	for d := range byDepth {
		byDepth[d] = map[string]any{}
	}
	for _, r := range rules {
		entry := map[string]any{"id": r.ID, "pattern": opaGlob(r.Pattern), "action": r.Action.String()}
		for _, t := range r.Tools {
			key := indexParts(t, r.Pattern)
			node := byDepth[len(key)]
			path := append([]string{t}, key...)
			for _, p := range path[:len(path)-1] {
				next, _ := node[p].(map[string]any)
				if next == nil {
					next = map[string]any{}
					node[p] = next
				}
				node = next
			}
			list, _ := node[path[len(path)-1]].([]any)
			node[path[len(path)-1]] = append(list, entry)
		}
	}
	levels, sep, arg, shell, path := map[string]any{}, map[string]any{}, map[string]any{}, map[string]any{}, map[string]any{}
	for t, l := range toolLevels {
		levels[t] = l.String()
	}
	for _, t := range shellTools {
		shell[t], sep[t], arg[t] = true, separator(t), "command"
	}
	for _, t := range pathTools {
		path[t], sep[t], arg[t] = true, separator(t), "path"
	}
	return map[string]any{"rules0": byDepth[0], "rules1": byDepth[1], "rules2": byDepth[2], "rules3": byDepth[3], "tools": levels, "separator": sep,
		"value_arg": arg, "shell_tools": shell, "path_tools": path, "workspace_prefix": Workspace + "/"}
}

// opaGlob writes a toolgate glob for glob.match: a trailing " *" also
// matches nothing in toolgate ("git push *" matches "git push"), which is
// the alternative {" *",""}; the one glob keeps one glob.match per rule.
func opaGlob(pattern string) string {
	if body, ok := strings.CutSuffix(pattern, " *"); ok {
		return body + "{ *,}"
	}
	return pattern
}

// NewOPA prepares the query data.toolgate.decision over the data document
// of rules.
func NewOPA(rules []Rule) (Engine, error) {
	store := inmem.NewFromObjectWithOpts(opaData(rules), inmem.OptReturnASTValuesOnRead(true))
	pq, err := rego.New(
		rego.Query("data.toolgate.decision"),
		rego.Module("toolgate.rego", opaModule),
		rego.Store(store),
	).PrepareForEval(context.Background())
	if err != nil {
		return nil, fmt.Errorf("opa prepare: %w", err)
	}
	return opaEngine{pq}, nil
}

// Name is "OPA".
func (o opaEngine) Name() string { return "OPA" }

// Bind builds the input document once, as OPA's server parses a request
// body into a Rego value before it evaluates; each decision is one Eval.
func (o opaEngine) Bind(c Call) func() policy.Level {
	input, err := ast.InterfaceToValue(map[string]any{"tool_name": c.Tool, "tool_args": c.Args})
	if err != nil {
		return func() policy.Level { return policy.LevelNone }
	}
	ctx := context.Background()
	return func() policy.Level {
		rs, err := o.pq.Eval(ctx, rego.EvalParsedInput(input))
		if err != nil || len(rs) != 1 || len(rs[0].Expressions) != 1 {
			return policy.LevelNone
		}
		s, _ := rs[0].Expressions[0].Value.(string)
		return levelOf(s)
	}
}

// levelOf reads a level's name; anything else is LevelNone, which no
// expected decision is, so a broken answer fails the check.
func levelOf(s string) policy.Level {
	switch s {
	case "allow":
		return policy.Allow
	case "ask":
		return policy.Ask
	case "deny":
		return policy.Deny
	}
	return policy.LevelNone
}
