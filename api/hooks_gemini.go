package api

import (
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// Gemini CLI's BeforeTool hook, as its hooks reference documents it:
// https://geminicli.com/docs/hooks/reference/ (docs/hooks/reference.md in
// google-gemini/gemini-cli: "Base input schema", "Common output fields",
// "BeforeTool"). Gemini CLI runs command hooks only (settings.json), so its
// events reach this route through `toolgate hook gemini`.
//
// BeforeTool can refuse a call (decision "deny", alias "block", with the
// reason sent to the model) or say nothing and let Gemini CLI's own flow
// go on, its own confirmation prompts included; it has no way to ask the
// user, and no PermissionRequest event. So toolgate's allow is answered
// with no decision ({}), its deny with decision deny, and its ask waits
// here for a person's answer in toolgate: their allow is answered with no
// decision, anything else (a denial, an expiry, no answer within the wait)
// with a deny whose reason says which.

// The Gemini CLI hook event the route takes.
const eventBeforeTool = "BeforeTool"

var geminiAgent = hookAgent{name: AgentGemini, tools: engine.GeminiTools, moreArgs: geminiArgs,
	refuse:           func(_, reason string) any { return GeminiBeforeToolOutput{Decision: "deny", Reason: reason} },
	bookkeepingTools: geminiBookkeeping}

// geminiArgs sets the workdir of a run_shell_command call: its dir_path
// (newer releases) or directory argument, relative to the project root,
// else the hook's cwd. The engine resolves the command's relative paths
// against workdir, so it must be where Gemini CLI runs the command; a
// workdir member in the tool input (not an argument of the tool) is
// replaced.
func geminiArgs(in *HookInput, tool string, args map[string]any) {
	if tool != "bash" {
		return
	}
	for _, k := range []string{"dir_path", "directory"} {
		if d, ok := args[k].(string); ok && strings.TrimSpace(d) != "" {
			args["workdir"] = d
			return
		}
	}
	shellWorkdir(in, tool, args)
}

// GeminiBeforeToolOutput is the answer to a BeforeTool event: decision
// deny with a reason, or neither (written as {}).
type GeminiBeforeToolOutput struct {
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// handleGeminiHook is POST /api/v1/hooks/gemini.
func (s *Server) handleGeminiHook(w http.ResponseWriter, r *http.Request) {
	c, ok := s.decideHook(w, r, geminiAgent, eventBeforeTool)
	if !ok {
		return
	}
	var out GeminiBeforeToolOutput
	switch c.d.Level {
	case policy.Deny:
		out = GeminiBeforeToolOutput{Decision: "deny", Reason: hookReason(c.e, c.d)}
	case policy.Ask:
		if !c.waits() {
			break // ask=agent: Gemini CLI's own confirmation decides
		}
		p, ok := s.hookAsk(w, r, c)
		if !ok {
			return
		}
		if !p.allow {
			out = GeminiBeforeToolOutput{Decision: "deny", Reason: p.message}
		}
	}
	writeJSON(w, http.StatusOK, out)
}
