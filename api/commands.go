package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
)

// CommandRequest is the body of POST /api/v1/commands.
type CommandRequest struct {
	Text string `json:"text"`
}

// CommandResponse is what a terminal prints and the RPC methods used.
type CommandResponse struct {
	OK      bool     `json:"ok"`
	Output  string   `json:"output"`
	Methods []string `json:"methods"`
}

// handleCommand is POST /api/v1/commands: run one /permissions or /add-dir
// line. Viewing needs the read right, everything else the write right. A
// parse error is a 400 whose message is the text docs/configuration.md#validation gives; a failed
// write names the RPC method in the message, as the TUI shows it.
func (s *Server) handleCommand(w http.ResponseWriter, r *http.Request) {
	var in CommandRequest
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	cmd, err := ParseCommand(in.Text)
	if err != nil {
		writeError(w, r, service.BadRequest("text", "%s", err.Error()))
		return
	}
	if cmd.Kind != CommandView {
		p, _ := PrincipalFrom(r.Context())
		if err := service.Require(p, service.RightWrite); err != nil {
			writeError(w, r, err)
			return
		}
	}
	out, err := s.runCommand(cmd)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// runCommand carries out a parsed command.
func (s *Server) runCommand(cmd Command) (CommandResponse, error) {
	switch cmd.Kind {
	case CommandView:
		text, err := s.viewText()
		return CommandResponse{OK: err == nil, Output: text, Methods: []string{"permissions.tools.get", "permissions.rules.get"}}, err
	case CommandToolLevel:
		const method = "permissions.tools.update"
		if _, err := s.policy.SetToolLevel("", cmd.Tool, cmd.Level); err != nil {
			return CommandResponse{}, methodError(method, err)
		}
		return CommandResponse{OK: true, Output: fmt.Sprintf("✓ %s →  %s\n", cmd.Tool, cmd.Level), Methods: []string{method}}, nil
	case CommandRule:
		return s.runRuleCommand(cmd)
	case CommandAddDir:
		const method = "command.add_dir"
		res, err := s.policy.AddDir("", cmd.Path)
		if err != nil {
			return CommandResponse{}, methodError(method, err)
		}
		return CommandResponse{OK: true, Output: addDirText(res), Methods: []string{method}}, nil
	}
	return CommandResponse{}, fmt.Errorf("command kind %d", cmd.Kind)
}

// runRuleCommand creates the rule of docs/agents.md#editing-the-policy-over-the-api, or updates it when its id
// exists (the same command run again, or a changed level).
func (s *Server) runRuleCommand(cmd Command) (CommandResponse, error) {
	id := CLIRuleID(cmd.Tool, cmd.Pattern)
	typed := policy.Rule{ID: id, Tools: []string{cmd.Tool}, Pattern: cmd.Pattern}
	if lvl, ok := policy.ParseLevel(cmd.Level); ok {
		typed.Action = lvl
	} else {
		typed.BadAction = cmd.Level
	}
	methods := []string{"permissions.rules.create"}
	verb := "created"
	_, _, err := s.policy.CreateRule("", typed)
	if errors.Is(err, store.ErrExists) {
		methods = append(methods, "permissions.rules.update")
		verb = "updated"
		_, err = s.policy.UpdateRule("", id, policy.ReplaceFields(typed, "tools", "pattern", "action"))
	}
	if err != nil {
		return CommandResponse{}, methodError(methods[len(methods)-1], err)
	}
	out := fmt.Sprintf("✓ rule %s: [%s]  %s  pattern: %s  action: %s\n", verb, id, cmd.Tool, cmd.Pattern, cmd.Level)
	return CommandResponse{OK: true, Output: out, Methods: methods}, nil
}

// methodError names the RPC method that failed (docs/agents.md#editing-the-policy-over-the-api), keeping the
// status of the underlying error.
func methodError(method string, err error) error {
	e := *service.Classify(err)
	e.Message = method + " failed: " + e.Message
	e.Cause = err
	return &e
}

// viewText renders the two sections of docs/agents.md#editing-the-policy-over-the-api.
func (s *Server) viewText() (string, error) {
	sec, _, err := s.section()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("── Tool Permissions ──\n")
	tools := toolsOf(sec)
	names := orderedTools(s.deps.Policy.ToolOrder(), tools)
	width := 0
	for _, n := range names {
		width = max(width, len([]rune(n)))
	}
	if len(names) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, n := range names {
		fmt.Fprintf(&b, "  %s%s →  %s\n", n, strings.Repeat(" ", width-len([]rune(n))), toolLevelText(toolEntry(tools, n)))
	}
	b.WriteString("\n── Rules ──\n")
	rules := sec.Rules.Entries
	if len(rules) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, e := range rules {
		b.WriteString("  " + ruleText(policy.MappingOf(e.Any())) + "\n")
	}
	return b.String(), nil
}

// orderedTools lists the tools in file order, then any others sorted.
func orderedTools(order []string, tools policy.Mapping) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range order {
		if _, ok := tools.Get(n); ok && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, f := range tools.Keys { // sorted
		if !seen[f.Key] {
			out = append(out, f.Key)
		}
	}
	return out
}

// toolEntry is a tool's entry as written.
func toolEntry(tools policy.Mapping, name string) any {
	v, _ := tools.Get(name)
	return v.Any()
}

// toolLevelText shows a plain level, or the "*" level of a legacy entry.
func toolLevelText(v any) string {
	if m := policy.MappingOf(v); m.IsMapping() {
		star, _ := m.Get("*")
		return fmt.Sprint(star.Any()) + " (patterns)"
	}
	return fmt.Sprint(v)
}

// ruleText is one line of the Rules section: [id]  tools  pattern: p  action: a.
func ruleText(m policy.Mapping) string {
	field := func(k string) any { v, _ := m.Get(k); return v.Any() }
	id, _ := field("id").(string)
	if id == "" {
		id = "?"
	}
	var tools string
	switch t := field("tools").(type) {
	case string:
		tools = t
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = fmt.Sprint(x)
		}
		tools = strings.Join(parts, ",")
	}
	line := fmt.Sprintf("[%s]  %s  pattern: %v", id, tools, field("pattern"))
	if a := field("action"); a != nil {
		return line + fmt.Sprintf("  action: %v", a)
	}
	if sev := field("severity"); sev != nil {
		return line + fmt.Sprintf("  severity: %v", sev)
	}
	return line
}

// addDirText is what /add-dir prints.
func addDirText(res store.AddDirResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "✓ trusted directory: %s\n  external_directory[%s] = %s\n", res.Dir, res.Dir, res.ExternalDirectory)
	if !res.Tiered {
		b.WriteString("  schema is not tiered_policy: approval_overrides not written\n")
		return b.String()
	}
	for _, o := range res.Created {
		fmt.Fprintf(&b, "  approval override added: %s\n", o.ID)
	}
	for _, id := range res.Existing {
		fmt.Fprintf(&b, "  approval override already present: %s\n", id)
	}
	return b.String()
}
