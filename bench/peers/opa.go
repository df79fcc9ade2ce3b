package peers

import (
	"context"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/toolgate/toolgate/engine"
)

// opaModule is the Rego policy, written as an OPA expert writes a policy of
// many rules: the rules are data, not Rego (one module whatever the
// policy's size, so compiling stays cheap and the rules can change without
// a new bundle); they are indexed by tool and by the value's leading parts
// (an object lookup, the way OPA's docs make large policies fast), so one
// call reads only the rules whose literal prefix it has; glob.match with
// no delimiters (null) is the glob, * matching any text as in toolgate;
// deny beats ask beats allow, a path outside the workspace is at least
// ask, and no hit falls to the tool's level or the default. The query is
// prepared once (PrepareForEval); each call is one Eval.
const opaModule = `package toolgate

import rego.v1

value := input.tool_args[data.value_arg[input.tool_name]]

# hits are the levels of the rules that match the value, read from the
# index under the value's leading 0 to 3 parts (the index files a rule by
# the parts of its pattern before the first glob character).
hits contains r.action if {
	sep := data.separator[input.tool_name]
	parts := split(value, sep)
	some k in [0, 1, 2, 3]
	k <= count(parts)
	some r in data.rules[input.tool_name][concat(sep, array.slice(parts, 0, k))]
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
// data.rules[tool][IndexKey] = [{pattern, action}].
func opaData(rules []Rule) map[string]any {
	index := map[string]any{}
	for _, r := range rules {
		for _, t := range r.Tools {
			byKey, _ := index[t].(map[string]any)
			if byKey == nil {
				byKey = map[string]any{}
				index[t] = byKey
			}
			k := IndexKey(t, r.Pattern)
			list, _ := byKey[k].([]any)
			byKey[k] = append(list, map[string]any{"id": r.ID, "pattern": r.Pattern, "action": r.Action.String()})
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
	return map[string]any{"rules": index, "tools": levels, "separator": sep,
		"value_arg": arg, "shell_tools": shell, "path_tools": path, "workspace_prefix": Workspace + "/"}
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

func (o opaEngine) Name() string { return "OPA" }

// Bind builds the input document once, as OPA's server parses a request
// body into a Rego value before it evaluates; each decision is one Eval.
func (o opaEngine) Bind(c Call) func() engine.Level {
	input, err := ast.InterfaceToValue(map[string]any{"tool_name": c.Tool, "tool_args": c.Args})
	if err != nil {
		return func() engine.Level { return engine.LevelNone }
	}
	ctx := context.Background()
	return func() engine.Level {
		rs, err := o.pq.Eval(ctx, rego.EvalParsedInput(input))
		if err != nil || len(rs) != 1 || len(rs[0].Expressions) != 1 {
			return engine.LevelNone
		}
		s, _ := rs[0].Expressions[0].Value.(string)
		return levelOf(s)
	}
}

// levelOf reads a level's name; anything else is LevelNone, which no
// expected decision is, so a broken answer fails the check.
func levelOf(s string) engine.Level {
	switch s {
	case "allow":
		return engine.Allow
	case "ask":
		return engine.Ask
	case "deny":
		return engine.Deny
	}
	return engine.LevelNone
}
