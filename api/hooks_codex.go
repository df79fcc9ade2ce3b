package api

import (
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/engine"
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
// are not acted on), so a PreToolUse allow or ask is answered with no
// decision, and an ask is put to a person when Codex sends its
// PermissionRequest. PermissionRequest answers decision.behavior allow or
// deny with a message, as Claude Code's does.
//
// Codex sends no PermissionRequest when its approval policy never prompts
// (approval_policy = "never"), and then toolgate's asks would bind nothing.
// For that setup the request may say ask=wait: a PreToolUse ask then waits
// here for a person's answer, their allow is answered with no decision and
// anything else with a deny, as Gemini CLI's BeforeTool is.

// codexTools are Claude Code's tool names plus apply_patch, Codex's file
// edit tool.
var codexTools = func() map[string]string {
	m := map[string]string{"apply_patch": "edit_file"}
	for k, v := range claudeCodeTools {
		m[k] = v
	}
	return m
}()

var codexAgent = hookAgent{name: AgentCodex, tools: codexTools, moreArgs: codexArgs, refuse: claudeRefuse}

// CodexPreToolUseOutput is the answer to a Codex PreToolUse event: a deny
// with its reason, or no decision (the zero value, written as {}).
type CodexPreToolUseOutput struct {
	HookSpecificOutput *ClaudePreToolUseDecision `json:"hookSpecificOutput,omitempty"`
}

// handleCodexHook is POST /api/v1/hooks/codex.
func (s *Server) handleCodexHook(w http.ResponseWriter, r *http.Request) {
	askWait, err := codexAskWait(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	c, ok := s.decideHook(w, r, codexAgent, eventPreToolUse, eventPermissionRequest)
	if !ok {
		return
	}
	if c.in.HookEventName == eventPreToolUse {
		s.codexPreToolUse(w, r, c, askWait)
		return
	}
	ans, ok := s.permissionAnswer(w, r, c)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, ClaudePermissionRequestOutput{HookSpecificOutput: ClaudePermissionRequestDecision{
		HookEventName: eventPermissionRequest, Decision: ans}})
}

// codexPreToolUse answers a PreToolUse: a deny, or no decision; with
// ask=wait, an ask waits for a person first.
func (s *Server) codexPreToolUse(w http.ResponseWriter, r *http.Request, c hookCall, askWait bool) {
	deny := func(reason string) CodexPreToolUseOutput {
		return CodexPreToolUseOutput{HookSpecificOutput: &ClaudePreToolUseDecision{HookEventName: eventPreToolUse,
			PermissionDecision: "deny", PermissionDecisionReason: reason}}
	}
	var out CodexPreToolUseOutput
	switch {
	case c.d.Level == engine.Deny:
		out = deny(hookReason(c.d))
	case c.d.Level == engine.Ask && askWait:
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

// codexAskWait reads the ask query parameter: "wait", or absent.
func codexAskWait(r *http.Request) (bool, error) {
	switch v := r.URL.Query().Get("ask"); v {
	case "":
		return false, nil
	case "wait":
		return true, nil
	default:
		return false, badRequest("ask", "ask must be wait or absent, not %q", v)
	}
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
