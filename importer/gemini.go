package importer

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/toolgate/toolgate/engine"
)

// Gemini CLI's policy engine, as docs/reference/policy-engine.md in
// google-gemini/gemini-cli documents it: [[rule]] tables with toolName (or
// mcpName), commandPrefix, commandRegex or argsPattern, a decision (allow,
// deny, ask_user) and a priority; the matching rule with the highest
// priority decides. toolgate's rules have no priority: the strictest
// matching rule decides. The two agree whenever a rule of higher priority
// is at least as strict as every lower one it can meet; where a less
// strict rule outranks a stricter one, toolgate lets the stricter decide
// the calls both meet, and the import says so (Problem.Stricter).

var geminiLevels = map[string]string{"allow": Allow, "deny": Deny, "ask_user": Ask}

// geminiRule is one [[rule]] table, as far as the import reads it.
type geminiRule struct {
	ToolName      any            `toml:"toolName"`
	MCPName       string         `toml:"mcpName"`
	CommandPrefix any            `toml:"commandPrefix"`
	CommandRegex  string         `toml:"commandRegex"`
	ArgsPattern   string         `toml:"argsPattern"`
	Decision      string         `toml:"decision"`
	Priority      *float64       `toml:"priority"`
	DenyMessage   string         `toml:"denyMessage"`
	Modes         []string       `toml:"modes"`
	Interactive   *bool          `toml:"interactive"`
	Subagent      string         `toml:"subagent"`
	Annotations   map[string]any `toml:"toolAnnotations"`
	SafetyChecker any            `toml:"safety_checker"`
}

// geminiConverted is one rule as converted, kept for the priority check.
type geminiConverted struct {
	where    string
	priority float64
	level    string
	tools    []string
	prefixes []string // commandPrefix words; nil when the rule is a regexp or whole-tool
	whole    bool
}

// Gemini converts a Gemini CLI policy TOML file.
func Gemini(data []byte) (*Result, error) {
	var doc struct {
		Rule []geminiRule `toml:"rule"`
	}
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a Gemini CLI policy file: %w", err)
	}
	r := newResult("gemini")
	var done []geminiConverted
	for i, g := range doc.Rule {
		where := fmt.Sprintf("rule[%d] %s", i, geminiText(g))
		if c, ok := geminiRuleTo(r, where, g); ok {
			done = append(done, c)
		}
	}
	geminiOrder(r, done)
	return r, nil
}

// geminiText shows a rule's main fields.
func geminiText(g geminiRule) string {
	var parts []string
	add := func(k string, v any) {
		if v != nil && v != "" {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	add("toolName", g.ToolName)
	add("mcpName", g.MCPName)
	add("commandPrefix", g.CommandPrefix)
	add("commandRegex", g.CommandRegex)
	add("argsPattern", g.ArgsPattern)
	add("decision", g.Decision)
	if g.Priority != nil {
		add("priority", *g.Priority)
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// geminiRuleTo converts one rule; ok is false when nothing was written.
func geminiRuleTo(r *Result, where string, g geminiRule) (geminiConverted, bool) {
	c := geminiConverted{where: where}
	level, ok := geminiLevels[g.Decision]
	if !ok {
		r.problem(where, "decision %q is not allow, deny or ask_user", g.Decision)
		return c, false
	}
	if reason := geminiCondition(g); reason != "" {
		r.problem(where, "%s", reason)
		return c, false
	}
	c.level = level
	if g.Priority != nil {
		c.priority = *g.Priority
	}
	tools, reason := geminiToolNames(g)
	if reason != "" {
		r.problem(where, "%s", reason)
		return c, false
	}
	c.tools = tools
	desc := "Gemini CLI: " + g.Decision
	if g.DenyMessage != "" {
		desc += ": " + g.DenyMessage
	}
	idBase := "gemini_" + g.Decision + "_" + strings.Join(tools, "_")
	prefixes, err := stringOrList(g.CommandPrefix)
	switch {
	case err != nil:
		r.problem(where, "commandPrefix: %v", err)
		return c, false
	case len(prefixes) > 0 || g.CommandRegex != "":
		if len(tools) != 1 || tools[0] != "bash" {
			r.problem(where, "commandPrefix and commandRegex apply to run_shell_command only")
			return c, false
		}
	}
	switch {
	case len(prefixes) > 0:
		// Gemini matches a prefix followed by white space or the command's
		// end; toolgate's "PREFIX *" matches the prefix alone or followed by
		// a space, and a prefix with a wildcard character is a regexp.
		for _, p := range prefixes {
			r.addRule(Rule{Tools: tools, MatchType: "command", Pattern: shellGlob(prefixGlob(p)), Action: level, Description: desc}, idBase+"_"+p)
		}
		c.prefixes = prefixes
	case g.CommandRegex != "":
		// Gemini tests "command":"<regex> against the arguments' JSON; so
		// does an args rule over their canonical JSON.
		if reason := checkRegexp(g.CommandRegex); reason != "" {
			r.problem(where, "%s", reason)
			return c, false
		}
		r.addRule(Rule{Tools: tools, MatchType: "args", Pattern: `re:"command":"` + g.CommandRegex, Action: level, Description: desc}, idBase+"_re")
	case g.ArgsPattern != "":
		if reason := checkRegexp(g.ArgsPattern); reason != "" {
			r.problem(where, "%s", reason)
			return c, false
		}
		r.addRule(Rule{Tools: tools, MatchType: "args", Pattern: "re:" + g.ArgsPattern, Action: level, Description: desc}, idBase+"_args")
	default:
		c.whole = true
		r.wholeTool(tools, level, idBase, desc)
	}
	return c, true
}

// geminiCondition says why a rule that applies only under conditions
// toolgate cannot see is not carried over ("" when it has none).
func geminiCondition(g geminiRule) string {
	switch {
	case len(g.Modes) > 0:
		return fmt.Sprintf("applies only in Gemini CLI's approval modes %v; toolgate has no modes", g.Modes)
	case g.Interactive != nil:
		return "applies only in interactive or only in headless runs, which toolgate cannot tell apart"
	case g.Subagent != "":
		return "applies only to one subagent's calls, which toolgate cannot tell apart"
	case len(g.Annotations) > 0:
		return "matches MCP tool annotations, which toolgate does not receive"
	case g.SafetyChecker != nil:
		return "runs a Gemini CLI safety checker toolgate does not have"
	case g.CommandPrefix != nil && g.CommandRegex != "":
		return "commandPrefix and commandRegex together are refused by Gemini CLI"
	}
	return ""
}

// geminiToolNames maps toolName (and mcpName) onto toolgate's tools. An
// MCP server's tools are named as toolgate's MCP gateway names them
// (mcp__SERVER__TOOL), since Gemini CLI's own MCP calls reach toolgate
// only through it.
func geminiToolNames(g geminiRule) ([]string, string) {
	names, err := stringOrList(g.ToolName)
	if err != nil {
		return nil, "toolName: " + err.Error()
	}
	if g.MCPName != "" {
		if len(names) == 0 {
			return []string{"mcp__" + g.MCPName + "__*"}, ""
		}
		var out []string
		for _, n := range names {
			if strings.Contains(n, "*") {
				return nil, "a wildcard toolName inside an MCP server is not a toolgate name"
			}
			out = append(out, "mcp__"+g.MCPName+"__"+n)
		}
		return out, ""
	}
	if len(names) == 0 {
		if g.CommandPrefix != nil || g.CommandRegex != "" {
			return []string{"bash"}, ""
		}
		return nil, "names no tool; toolgate's rules name their tools"
	}
	var out []string
	for _, n := range names {
		if strings.Contains(n, "*") {
			return nil, fmt.Sprintf("the wildcard tool name %q has no toolgate counterpart (toolgate names MCP tools mcp__SERVER__TOOL through its gateway)", n)
		}
		if t, ok := engine.GeminiTools[n]; ok {
			n = t
		}
		out = append(out, n)
	}
	return out, ""
}

// stringOrList reads a TOML string or list of strings.
func stringOrList(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		var out []string
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%v is not a string", e)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%v is neither a string nor a list of strings", v)
}

// checkRegexp says why a source's regexp (JavaScript) cannot be a toolgate
// re: pattern (Go RE2): lookarounds and back-references do not compile.
func checkRegexp(re string) string {
	if _, err := regexp.Compile(re); err != nil {
		return fmt.Sprintf("the regexp does not compile as RE2 (toolgate's regexps): %v", err)
	}
	return ""
}

// geminiOrder reports each rule that Gemini's priority lets win over a
// stricter rule it can meet: toolgate's strictest-wins gives those calls
// the stricter level.
func geminiOrder(r *Result, rules []geminiConverted) {
	for _, hi := range rules {
		for _, lo := range rules {
			if hi.priority < lo.priority || strictness(hi.level) >= strictness(lo.level) || !geminiMeet(hi, lo) {
				continue
			}
			if hi.priority == lo.priority {
				r.stricter(hi.where, "has the priority of %s, which is stricter (%s); where both match, toolgate gives %s", lo.where, lo.level, lo.level)
			} else {
				r.stricter(hi.where, "outranks %s in Gemini CLI, but toolgate lets the stricter rule decide: where both match, toolgate gives %s", lo.where, lo.level)
			}
			break
		}
	}
}

// geminiMeet reports whether two rules can match one call: a tool in
// common, and prefixes of which one starts the other (regexps are assumed
// to meet anything).
func geminiMeet(a, b geminiConverted) bool {
	common := false
	for _, t := range a.tools {
		for _, u := range b.tools {
			if t == u || strings.HasSuffix(t, "__*") && strings.HasPrefix(u, strings.TrimSuffix(t, "*")) ||
				strings.HasSuffix(u, "__*") && strings.HasPrefix(t, strings.TrimSuffix(u, "*")) {
				common = true
			}
		}
	}
	if !common || a.whole || b.whole || a.prefixes == nil || b.prefixes == nil {
		return common
	}
	for _, p := range a.prefixes {
		for _, q := range b.prefixes {
			if wordPrefix(p, q) || wordPrefix(q, p) {
				return true
			}
		}
	}
	return false
}

// wordPrefix reports whether command prefix p starts q at a word boundary.
func wordPrefix(p, q string) bool {
	return q == p || strings.HasPrefix(q, p+" ")
}
