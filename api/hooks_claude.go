package api

import (
	"net/http"

	"github.com/toolgate/toolgate/engine"
)

// Claude Code's hooks, as its hooks reference documents them:
// https://code.claude.com/docs/en/hooks ("Common input fields",
// "PreToolUse input", "PreToolUse decision control", "PermissionRequest
// input", "PermissionRequest decision control", "HTTP hook fields" and
// "HTTP response handling"). An http hook posts the event as the body; a
// command hook gets it on stdin (cmd/toolgate posts it here). The answer is
// a 2xx JSON body: a non-2xx status or a dead server is a non-blocking
// error for Claude Code, which is why every decision, deny included, is
// answered 200.

// The Claude Code hook events the route takes.
const (
	eventPreToolUse        = "PreToolUse"
	eventPermissionRequest = "PermissionRequest"
)

// claudeCodeTools maps Claude Code's tool names onto ours (openapi.yaml);
// any other name, mcp__server__tool included, is kept.
var claudeCodeTools = map[string]string{
	"Bash":         "bash",
	"Read":         "read_file",
	"Write":        "write_file",
	"Edit":         "edit_file",
	"MultiEdit":    "edit_file",
	"NotebookEdit": "edit_file",
	"Glob":         "glob",
	"Grep":         "grep",
	"LS":           "list_dir",
	"WebFetch":     "mcp_fetch_webpage",
	"WebSearch":    "mcp_free_search",
}

var claudeCodeAgent = hookAgent{name: AgentClaudeCode, tools: claudeCodeTools, moreArgs: shellWorkdir, refuse: claudeRefuse}

// claudeRefuse is a deny in the output of the event (PreToolUse's when
// the event is not known): Claude Code and Codex read the same shapes.
func claudeRefuse(event, reason string) any {
	if event == eventPermissionRequest {
		return ClaudePermissionRequestOutput{HookSpecificOutput: ClaudePermissionRequestDecision{
			HookEventName: eventPermissionRequest, Decision: PermissionAnswer{Behavior: "deny", Message: reason}}}
	}
	return ClaudePreToolUseOutput{HookSpecificOutput: ClaudePreToolUseDecision{HookEventName: eventPreToolUse,
		PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

// ClaudePreToolUseOutput is the answer to a PreToolUse event.
type ClaudePreToolUseOutput struct {
	HookSpecificOutput ClaudePreToolUseDecision `json:"hookSpecificOutput"`
}

// ClaudePreToolUseDecision is PreToolUse's hookSpecificOutput: allow, deny
// or ask, with the reason Claude Code shows (to the user for allow and
// ask, to the model for deny).
type ClaudePreToolUseDecision struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

// ClaudePermissionRequestOutput is the answer to a PermissionRequest event.
type ClaudePermissionRequestOutput struct {
	HookSpecificOutput ClaudePermissionRequestDecision `json:"hookSpecificOutput"`
}

// ClaudePermissionRequestDecision is PermissionRequest's hookSpecificOutput.
type ClaudePermissionRequestDecision struct {
	HookEventName string           `json:"hookEventName"`
	Decision      PermissionAnswer `json:"decision"`
}

// PermissionAnswer is a PermissionRequest decision: behavior allow or deny;
// message (deny only) tells the model why. Codex CLI reads the same shape.
type PermissionAnswer struct {
	Behavior string `json:"behavior"`
	Message  string `json:"message,omitempty"`
}

// handleClaudeCodeHook is POST /api/v1/hooks/claude-code. PreToolUse is
// answered from the decision at once. PermissionRequest, which Claude Code
// sends when it is about to prompt in the terminal, is answered allow or
// deny at once when the policy decides, and otherwise waits for a person's
// answer in toolgate (the path /api/v1/check takes).
func (s *Server) handleClaudeCodeHook(w http.ResponseWriter, r *http.Request) {
	c, ok := s.decideHook(w, r, claudeCodeAgent, eventPreToolUse, eventPermissionRequest)
	if !ok {
		return
	}
	if c.in.HookEventName == eventPreToolUse {
		writeJSON(w, http.StatusOK, ClaudePreToolUseOutput{HookSpecificOutput: ClaudePreToolUseDecision{
			HookEventName: eventPreToolUse, PermissionDecision: c.d.Level.String(),
			PermissionDecisionReason: hookReason(c.d)}})
		return
	}
	ans, ok := s.permissionAnswer(w, r, c)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, ClaudePermissionRequestOutput{HookSpecificOutput: ClaudePermissionRequestDecision{
		HookEventName: eventPermissionRequest, Decision: ans}})
}

// permissionAnswer answers a PermissionRequest (Claude Code's and Codex's):
// the policy's allow or deny, or for an ask a person's answer. ok is false
// when the response has been written (an error) or the agent went away.
func (s *Server) permissionAnswer(w http.ResponseWriter, r *http.Request, c hookCall) (PermissionAnswer, bool) {
	switch c.d.Level {
	case engine.Allow:
		return PermissionAnswer{Behavior: "allow"}, true
	case engine.Deny:
		return PermissionAnswer{Behavior: "deny", Message: hookReason(c.d)}, true
	}
	p, ok := s.hookAsk(w, r, c)
	if !ok {
		return PermissionAnswer{}, false
	}
	if p.allow {
		return PermissionAnswer{Behavior: "allow"}, true
	}
	return PermissionAnswer{Behavior: "deny", Message: p.message}, true
}
