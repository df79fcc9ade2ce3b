package api

import (
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// Codex CLI's hooks, as its documentation (https://developers.openai.com/codex/hooks)
// and its generated hook schemas in openai/codex
// (codex-rs/hooks/schema/generated/pre-tool-use.command.{input,output}.schema.json
// and permission-request.command.{input,output}.schema.json) define them;
// the PermissionRequest example payload is the one in openai/codex pull
// request 17563. Codex runs command hooks only (hooks.json), so its events
// reach this route through `toolgate hook codex`.
//
// The input fields and tool names are Claude Code's (Bash, apply_patch,
// mcp__server__tool). The answers differ in one place: Codex honours only
// "deny" from PreToolUse (its output schema lists allow and ask, but they
// are not acted on), so a PreToolUse allow is answered with no decision,
// and an ask waits here for a person's answer: their allow is answered
// with no decision, anything else with a deny, as Gemini CLI's BeforeTool
// is. Codex sends no PermissionRequest when its approval policy never
// prompts, so an ask left to it (ask=agent) would bind nothing there.
// PermissionRequest answers decision.behavior allow or deny with a
// message, as Claude Code's does.

// codexTools are Claude Code's tool names (Codex reports every shell-like
// tool as Bash) plus Codex's own: apply_patch, its file edit tool;
// view_image, which reads the image at its path; web_search.
var codexTools = func() map[string]string {
	m := map[string]string{"apply_patch": "edit_file", "view_image": "read_file", "web_search": "mcp_free_search"}
	for k, v := range claudeCodeTools {
		m[k] = v
	}
	return m
}()

var codexAgent = hookAgent{name: AgentCodex, tools: codexTools, moreArgs: codexArgs, refuse: claudeRefuse,
	bookkeepingTools: codexBookkeeping}

// CodexPreToolUseOutput is the answer to a Codex PreToolUse event: a deny
// with its reason, or no decision (the zero value, written as {}).
type CodexPreToolUseOutput struct {
	HookSpecificOutput *ClaudePreToolUseDecision `json:"hookSpecificOutput,omitempty"`
}

// handleCodexHook is POST /api/v1/hooks/codex.
func (s *Server) handleCodexHook(w http.ResponseWriter, r *http.Request) {
	c, ok := s.decideHook(w, r, codexAgent, eventPreToolUse, eventPermissionRequest)
	if !ok {
		return
	}
	if c.in.HookEventName == eventPreToolUse {
		s.codexPreToolUse(w, r, c)
		return
	}
	s.writePermissionAnswer(w, r, c)
}

// codexPreToolUse answers a PreToolUse: a deny, or no decision; an ask
// waits for a person first (with ask=agent it is left to Codex's prompt).
func (s *Server) codexPreToolUse(w http.ResponseWriter, r *http.Request, c hookCall) {
	deny := func(reason string) CodexPreToolUseOutput {
		return CodexPreToolUseOutput{HookSpecificOutput: &ClaudePreToolUseDecision{HookEventName: eventPreToolUse,
			PermissionDecision: "deny", PermissionDecisionReason: reason}}
	}
	var out CodexPreToolUseOutput
	switch {
	case c.d.Level == policy.Deny:
		out = deny(hookReason(c.e, c.d))
	case c.d.Level == policy.Ask && c.waits():
		p, ok := s.hookAsk(w, r, c)
		if !ok {
			return
		}
		if !p.allow {
			out = deny(p.message)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// codexArgs sets a bash call's workdir (shellWorkdir) and adds the files an
// apply_patch call touches under file_path, so
// that path rules and the external directory check see every one of them:
// the patch text (in tool_input.command, or any string member holding a
// patch) names them in its "*** Add File:", "*** Update File:", "*** Delete
// File:" and "*** Move to:" lines. A file_path the input already has is
// kept in the list, so no member can hide the patch's files.
func codexArgs(in *HookInput, tool string, args map[string]any) {
	shellWorkdir(in, tool, args)
	if tool != "edit_file" {
		return
	}
	var paths []any
	for _, v := range args {
		if s, ok := v.(string); ok && strings.Contains(s, patchBegin) {
			for _, p := range patchPaths(s) {
				paths = append(paths, p)
			}
		}
	}
	switch len(paths) {
	case 0:
	case 1:
		addPathValue(args, "file_path", paths[0])
	default:
		addPathValue(args, "file_path", paths)
	}
}

const patchBegin = "*** Begin Patch"

// patchFileMarkers are the apply_patch lines that name a file.
var patchFileMarkers = []string{"*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"}

// patchPaths lists the files a patch names, in order.
func patchPaths(patch string) []string {
	var out []string
	for line := range strings.Lines(patch) {
		line = strings.TrimSpace(line)
		for _, m := range patchFileMarkers {
			if rest, ok := strings.CutPrefix(line, m); ok {
				if p := strings.TrimSpace(rest); p != "" {
					out = append(out, p)
				}
			}
		}
	}
	return out
}
