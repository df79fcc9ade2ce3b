package importer

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// The levels of a toolgate rule or tool.
const (
	Allow = "allow"
	Ask   = "ask"
	Deny  = "deny"
)

// strictness orders the levels: deny > ask > allow, the order in which
// toolgate's rules decide (docs/decisions.md#the-tiered-policy).
func strictness(level string) int {
	switch level {
	case Deny:
		return 3
	case Ask:
		return 2
	case Allow:
		return 1
	}
	return 0
}

// Rule is a toolgate rule as the import writes it (docs/configuration.md#a-rule).
type Rule struct {
	ID          string   `json:"id" yaml:"id"`
	Tools       []string `json:"tools" yaml:"tools,flow"`
	MatchType   string   `json:"match_type,omitempty" yaml:"match_type,omitempty"`
	Pattern     string   `json:"pattern" yaml:"pattern"`
	Action      string   `json:"action" yaml:"action"`
	Description string   `json:"description,omitempty" yaml:"description,omitempty"`
	Source      string   `json:"source" yaml:"source"`
	// Examples are the commands the source said the rule must and must not
	// match (Codex's match and not_match), as the rule's examples
	// (docs/configuration.md#rule-examples); nil when it has none.
	Examples *Examples `json:"examples,omitempty" yaml:"examples,omitempty"`
}

// Examples are a rule's examples as config.yaml and the REST API hold
// them.
type Examples struct {
	Match   []string `json:"match,omitempty" yaml:"match,omitempty"`
	NoMatch []string `json:"no_match,omitempty" yaml:"no_match,omitempty"`
}

// with is x with more examples added; nil when there are none.
func (x *Examples) with(more *Examples) *Examples {
	if more == nil {
		return x
	}
	out := &Examples{}
	if x != nil {
		*out = Examples{Match: slices.Clone(x.Match), NoMatch: slices.Clone(x.NoMatch)}
	}
	out.Match = append(out.Match, more.Match...)
	out.NoMatch = append(out.NoMatch, more.NoMatch...)
	if len(out.Match) == 0 && len(out.NoMatch) == 0 {
		return nil
	}
	return out
}

// Same reports whether two rules decide alike: the same tools, match type,
// pattern and action. A rule the policy already has in this sense is not
// written again, whatever its id.
func (r Rule) Same(o Rule) bool {
	a, b := slices.Clone(r.Tools), slices.Clone(o.Tools)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b) && matchType(r.MatchType) == matchType(o.MatchType) &&
		r.Pattern == o.Pattern && r.Action == o.Action
}

// matchType reads an absent match type and the informative ones as one:
// only args changes what a rule matches.
func matchType(m string) string {
	if m == "args" {
		return m
	}
	return ""
}

// Problem is a source entry the import could not carry over as it is.
type Problem struct {
	// Entry is the entry as the source wrote it, with its place.
	Entry string `json:"entry"`
	// Reason says why, in words a person can act on.
	Reason string `json:"reason"`
	// Stricter is set when the entry was carried over but toolgate decides
	// some calls more strictly than the source (a deny where it allowed,
	// never the other way); otherwise nothing of it was written.
	Stricter bool `json:"stricter,omitempty"`
}

// Result is what an import makes of one file: tool levels, rules, and the
// entries it could not carry over.
type Result struct {
	Agent string
	// Tools are whole-tool levels (permissions.tools), by tool name.
	Tools map[string]string
	// Defaults is defaults."*" when the source sets a level for every
	// tool; "" otherwise.
	Defaults string
	Rules    []Rule
	Problems []Problem
	// Dropped are entries that never decide in the source (a later entry
	// covers them, or the source's own order makes them dead); leaving them
	// out keeps every decision as it was.
	Dropped []Problem
}

func newResult(agent string) *Result {
	return &Result{Agent: agent, Tools: map[string]string{}}
}

// Complete reports whether every entry was carried over as it decides in
// the source.
func (r *Result) Complete() bool { return len(r.Problems) == 0 }

// problem records an entry not carried over.
func (r *Result) problem(entry, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{Entry: entry, Reason: fmt.Sprintf(format, args...)})
}

// stricter records an entry carried over that toolgate decides more
// strictly on some calls.
func (r *Result) stricter(entry, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{Entry: entry, Reason: fmt.Sprintf(format, args...), Stricter: true})
}

// drop records an entry that never decides in the source.
func (r *Result) drop(entry, format string, args ...any) {
	r.Dropped = append(r.Dropped, Problem{Entry: entry, Reason: fmt.Sprintf(format, args...)})
}

// setTool sets a whole-tool level; two entries for one tool keep the
// stricter, as every source here lets a deny of a tool beat an allow.
func (r *Result) setTool(tool, level string) {
	if hasControl(tool) {
		r.problem(strconv.Quote(tool), "the tool name holds a control character (a newline, a tab, ...), which no tool's name does; not carried over")
		return
	}
	if strictness(level) > strictness(r.Tools[tool]) {
		r.Tools[tool] = level
	}
}

// addRule appends a rule with an id made from its source, unique in the
// result; a rule that decides like one already there is not added twice.
func (r *Result) addRule(rule Rule, idBase string) {
	if hasControl(rule.Pattern) || slices.ContainsFunc(rule.Tools, hasControl) {
		r.problem(rule.Description+" "+strconv.Quote(rule.Pattern), "the entry holds a control character (a newline, a tab, ...), which no command, path or tool name these settings decide holds; not carried over")
		return
	}
	// What the engine would not take part (an empty pattern, a regexp it
	// cannot compile, a tool it does not know) is reported, never written:
	// an inert imported rule would silently decide nothing.
	if err := engine.CheckRule(&policy.Rule{Tools: rule.Tools, Pattern: rule.Pattern, MatchType: rule.MatchType}); err != nil {
		r.problem(rule.Description+" "+strconv.Quote(rule.Pattern), "toolgate would not use the rule (%s: %s); not carried over", err.Field, err.Message)
		return
	}
	for i := range r.Rules {
		if r.Rules[i].Same(rule) {
			r.Rules[i].Examples = r.Rules[i].Examples.with(rule.Examples)
			return
		}
	}
	rule.ID = r.uniqueID(idBase)
	rule.Source = "import:" + r.Agent
	r.Rules = append(r.Rules, rule)
}

// hasControl reports whether s holds an ASCII control character. No real
// entry does, and such text would not survive the printed YAML intact.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f })
}

var idUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

// uniqueID makes a readable id: the agent, the level's source words, cut
// to 60 characters, with -2, -3 ... when taken.
func (r *Result) uniqueID(base string) string {
	id := strings.Trim(idUnsafe.ReplaceAllString(strings.ToLower(base), "_"), "_")
	if len(id) > 60 {
		id = strings.TrimRight(id[:60], "_")
	}
	id = "import_" + id
	taken := func(s string) bool {
		return slices.ContainsFunc(r.Rules, func(x Rule) bool { return x.ID == s })
	}
	if !taken(id) {
		return id
	}
	for n := 2; ; n++ {
		if s := fmt.Sprintf("%s-%d", id, n); !taken(s) {
			return s
		}
	}
}

// everything is the pattern of an args rule that every call of its tools
// meets: the arguments' canonical JSON always has a start
// (docs/decisions.md#args-rules). A whole-tool ask is such a rule, not a
// tool level, because any allow rule of the tool would beat an ask tool
// level, where every source here lets the ask win.
const everything = "re:^"

// wholeTool carries over a level for every call of some tools: allow and
// deny as tool levels (a tool-level deny is a baseline no rule overrides,
// and a tool-level allow is the weakest answer, as in every source), ask
// as an args rule matching every call (toolgate's strictest-wins then lets
// an ask beat any allow rule, as the sources do). A tool no rule can name
// keeps an ask as its tool level: no allow rule can beat it either. MCP
// wildcard names can only be named by a rule.
func (r *Result) wholeTool(tools []string, level, idBase, description string) {
	var asRule []string
	for _, t := range tools {
		if level == Ask && ruleTool(t) || strings.HasPrefix(t, "mcp__") && strings.HasSuffix(t, "__*") {
			asRule = append(asRule, t)
			continue
		}
		r.setTool(t, level)
	}
	if len(asRule) > 0 {
		r.addRule(Rule{Tools: asRule, MatchType: "args", Pattern: everything, Action: level, Description: description}, idBase)
	}
}

// knownTools are the tools a rule may name besides MCP tools: toolgate's
// shell, path and network tools (engine.ShellTools, PathTools,
// NetworkTools; a test keeps the two lists equal).
var knownTools = []string{"bash", "mcp_exec_command", "create_terminal",
	"read_file", "write_file", "edit_file", "read_text_file", "write_text_file", "write", "read",
	"glob_file_search", "glob", "list_dir", "list_files", "grep", "search_replace",
	"mcp_fetch_webpage", "mcp_free_search", "mcp_paid_search"}

// ruleTool reports whether a rule may name the tool.
func ruleTool(t string) bool {
	return slices.Contains(knownTools, t) || strings.HasPrefix(t, "mcp__")
}
