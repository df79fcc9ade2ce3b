package api

import (
	"net/http"

	"github.com/toolgate/toolgate/policy"
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

var claudeCodeAgent = hookAgent{name: AgentClaudeCode, tools: claudeCodeTools, moreArgs: shellWorkdir, refuse: claudeRefuse,
	bookkeepingTools: claudeCodeBookkeeping}

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

// handleClaudeCodeHook is POST /api/v1/hooks/claude-code. Every answer is
// final (docs/agents.md#every-hook-answer-is-final): PreToolUse answers the
// policy's allow or deny, and its ask waits for a person's answer in
// toolgate and answers allow or deny, because Claude Code in
// bypassPermissions mode runs a call it was told to ask about. Only with
// ask=agent does the ask go back to Claude Code's own prompt.
// PermissionRequest, which Claude Code sends when it is about to prompt
// (its own ask rules, the protection of its settings), goes to a person
// unless the policy denies: the policy's allow never overrides it.
func (s *Server) handleClaudeCodeHook(w http.ResponseWriter, r *http.Request) {
	c, ok := s.decideHook(w, r, claudeCodeAgent, eventPreToolUse, eventPermissionRequest)
	if !ok {
		return
	}
	if c.in.HookEventName == eventPreToolUse {
		out, ok := s.claudePreToolUse(w, r, c)
		if ok {
			writeJSON(w, http.StatusOK, out)
		}
		return
	}
	s.writePermissionAnswer(w, r, c)
}

// claudePreToolUse decides a PreToolUse: the policy's allow or deny, an
// ask handed back (ask=agent), or a person's answer to the ask.
func (s *Server) claudePreToolUse(w http.ResponseWriter, r *http.Request, c hookCall) (ClaudePreToolUseOutput, bool) {
	answer := func(decision, reason string) ClaudePreToolUseOutput {
		return ClaudePreToolUseOutput{HookSpecificOutput: ClaudePreToolUseDecision{
			HookEventName: eventPreToolUse, PermissionDecision: decision, PermissionDecisionReason: reason}}
	}
	if c.d.Level != policy.Ask || !c.waits() {
		return answer(c.d.Level.String(), hookReason(c.e, c.d)), true
	}
	p, ok := s.hookAsk(w, r, c)
	if !ok {
		return ClaudePreToolUseOutput{}, false
	}
	if p.allow {
		return answer("allow", p.message), true
	}
	return answer("deny", p.message), true
}

// writePermissionAnswer answers a PermissionRequest (Claude Code's and
// Codex's). With ask=agent it answers no decision, so the agent prompts
// as it meant to.
func (s *Server) writePermissionAnswer(w http.ResponseWriter, r *http.Request, c hookCall) {
	if !c.waits() && c.d.Level != policy.Deny {
		writeJSON(w, http.StatusOK, struct{}{})
		return
	}
	ans, ok := s.permissionAnswer(w, r, c)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, ClaudePermissionRequestOutput{HookSpecificOutput: ClaudePermissionRequestDecision{
		HookEventName: eventPermissionRequest, Decision: ans}})
}

// permissionAnswer answers a PermissionRequest: the policy's deny at once,
// otherwise a person's answer, even when the policy allows the call: the
// agent raised this ask itself, and the policy alone never overrides it.
// ok is false when the response has been written (an error) or the agent
// went away.
func (s *Server) permissionAnswer(w http.ResponseWriter, r *http.Request, c hookCall) (PermissionAnswer, bool) {
	if c.d.Level == policy.Deny {
		return PermissionAnswer{Behavior: "deny", Message: hookReason(c.e, c.d)}, true
	}
	if c.d.Level != policy.Ask {
		c.d.Level = policy.Ask
		c.d.Reason = "the agent asks before this call, which the policy allows (" + c.d.Reason + ")"
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
