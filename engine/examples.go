package engine

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// exampleRuleID names the rule under test in the one-rule policy an
// example is decided by.
const exampleRuleID = "rule_under_test"

// checkExamples checks every rule's examples (docs/configuration.md#rule-examples):
// each match value must be matched by the rule and each no_match value
// must not. A value is decided as a call of the rule's first tool by a
// policy made of that rule alone, read exactly as a call is (shell readings,
// launch readings, path forms), with no filesystem and no built-in rules,
// so an example holds or fails the same on every machine. Only rules with
// examples pay for it, at compile time.
func (c *compiler) checkExamples(list []policy.Rule, listPath string) {
	for i := range list {
		r := &list[i]
		if r.Examples == nil || r.Inert() || CheckRule(r) != nil {
			continue // an unusable rule is reported for what it is
		}
		path := listPath + "[" + strconv.Itoa(r.Index) + "].examples"
		for j, v := range r.Examples.Match {
			if msg := exampleMiss(r, v, true, c.opts); msg != "" {
				c.problem(path+"."+policy.ExampleMatch+"["+strconv.Itoa(j)+"]", "%s", msg)
			}
		}
		for j, v := range r.Examples.NoMatch {
			if msg := exampleMiss(r, v, false, c.opts); msg != "" {
				c.problem(path+"."+policy.ExampleNoMatch+"["+strconv.Itoa(j)+"]", "%s", msg)
			}
		}
	}
}

// exampleMiss says why value does not hold as an example of r (want:
// matched or not), "" when it holds.
func exampleMiss(r *policy.Rule, value string, want bool, opts Options) string {
	got, msg := ExampleMatches(r, value, opts)
	if msg != "" {
		return msg
	}
	switch {
	case got == want:
		return ""
	case want:
		return "rule " + ruleLabel(r) + " does not match its example " + strconv.Quote(value)
	}
	return "rule " + ruleLabel(r) + " matches " + strconv.Quote(value) + ", listed under no_match"
}

// ExampleMatches reports whether r matches an example value as the check
// of its examples decides it, or why the value cannot be one ("" when it
// can): the rule form runs each example through it as you type.
func ExampleMatches(r *policy.Rule, value string, opts Options) (bool, string) {
	req, msg := exampleRequest(r, value)
	if msg != "" {
		return false, msg
	}
	return RuleMatchesAlone(r, req, opts), ""
}

// RuleMatchesAlone reports whether a policy made of r alone decides req by
// r: the test of a rule's examples, and of a rule typed into a form. The
// policy's default is allow, the least strict level, so that every reading
// by which an ask or deny rule makes a decision stricter shows (an ask
// rule's * reaches a comma or a quote only where that makes a call
// stricter: never under a default of ask).
func RuleMatchesAlone(r *policy.Rule, req *Request, opts Options) bool {
	rc := *r
	rc.ID, rc.Index, rc.Examples = exampleRuleID, 0, nil
	sec := policy.Section{Enabled: true, Tiered: true, Defaults: policy.Allow,
		External: policy.ExternalDirs{Star: policy.Allow, StarSet: true}, Rules: []policy.Rule{rc}}
	e, _ := CompileSection(&sec, nil, Options{Workspace: opts.Workspace, HomeDir: opts.HomeDir, CheckedChannels: opts.CheckedChannels})
	return strings.Contains(e.Evaluate(req).MatchedRule, "rules["+exampleRuleID+"]")
}

// exampleRequest is the call an example value stands for: the arguments'
// JSON for an args rule, else a command for a shell tool's rule and a path
// for a path tool's.
func exampleRequest(r *policy.Rule, value string) (*Request, string) {
	tool := r.Tools[0]
	if IsMCPTool(tool) && strings.HasSuffix(tool, "__*") {
		tool = strings.TrimSuffix(tool, "*") + "example"
	}
	var args map[string]any
	switch {
	case r.MatchType == policy.MatchArgs:
		if err := json.Unmarshal([]byte(value), &args); err != nil || args == nil {
			return nil, "example " + strconv.Quote(value) + " of an args rule must be the arguments as a JSON object"
		}
	case ToolCategory(tool) == CategoryShell:
		args = map[string]any{"command": value}
	default:
		args = map[string]any{"path": value}
	}
	return &Request{Call: NewCall(tool, args)}, ""
}

// ruleLabel names a rule in a problem: its id, else its pattern.
func ruleLabel(r *policy.Rule) string {
	if r.ID != "" {
		return strconv.Quote(r.ID)
	}
	return "with pattern " + strconv.Quote(r.Pattern)
}
