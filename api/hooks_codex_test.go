package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/approval"
)

// TestCodexPreToolUse checks Codex's answers with ask=agent: a deny with
// its reason, and no decision at all ({}) for allow and ask, which Codex
// does not act on. (Without ask=agent an ask waits for a person:
// TestCodexPreToolUseAskWait.)
func TestCodexPreToolUse(t *testing.T) {
	hs := newHookServer(t, time.Second)
	doc := payload(t, "codex/pretooluse-bash.json")
	cases := []struct {
		note   string
		body   []byte
		deny   bool
		reason string
	}{
		{note: "the doc's rm -f: ask, so no decision", body: doc},
		{note: "npm test: allow, so no decision", body: withMembers(t, doc, map[string]any{"tool_input": map[string]any{"command": "npm test"}})},
		{note: "rm -rf: deny", deny: true, reason: "no_rm_rf",
			body: withMembers(t, doc, map[string]any{"tool_input": map[string]any{"command": "rm -rf /"}})},
		{note: "apply_patch adding a file under /etc: deny on the patch's path", deny: true, reason: "no_etc",
			body: payload(t, "codex/pretooluse-apply-patch.json")},
		{note: "apply_patch inside the project: ask, so no decision",
			body: withMembers(t, payload(t, "codex/pretooluse-apply-patch.json"), map[string]any{"tool_input": map[string]any{
				"command": "*** Begin Patch\n*** Update File: src/main.rs\n@@\n-a\n+b\n*** End Patch\n"}})},
	}
	for _, c := range cases {
		status, body := hs.post(t, hs.agent, "/api/v1/hooks/codex?ask=agent", c.body)
		if status != 200 {
			t.Errorf("%s: status %d (%s)", c.note, status, body)
			continue
		}
		out := decodeTo[api.CodexPreToolUseOutput](t, body)
		if !c.deny {
			if strings.TrimSpace(string(body)) != "{}" {
				t.Errorf("%s: answer %s, want {}", c.note, body)
			}
			continue
		}
		h := out.HookSpecificOutput
		if h == nil || h.HookEventName != "PreToolUse" || h.PermissionDecision != "deny" || !strings.Contains(h.PermissionDecisionReason, c.reason) {
			t.Errorf("%s: answer %s, want a deny naming %q", c.note, body, c.reason)
		}
	}
}

// TestCodexPermissionRequest posts the PermissionRequest example of Codex's
// pull request 17563 (rm -f /tmp/example, an ask here) and answers it as a
// person; a deny by rule answers at once.
func TestCodexPermissionRequest(t *testing.T) {
	hs := newHookServer(t, 10*time.Second)
	const path = "/api/v1/hooks/codex"
	doc := payload(t, "codex/permissionrequest-bash.json")
	body := hs.askAnswered(t, path, doc, approval.ChoiceAllowOnce, "")
	out := decodeTo[api.ClaudePermissionRequestOutput](t, body).HookSpecificOutput
	if out.HookEventName != "PermissionRequest" || out.Decision.Behavior != "allow" {
		t.Errorf("the doc's payload, allowed by a person: %s, want behavior allow", body)
	}
	status, body := hs.post(t, hs.agent, path, withMembers(t, doc, map[string]any{"tool_input": map[string]any{"command": "rm -rf /tmp"}}))
	out = decodeTo[api.ClaudePermissionRequestOutput](t, body).HookSpecificOutput
	if status != 200 || out.Decision.Behavior != "deny" || !strings.Contains(out.Decision.Message, "no_rm_rf") {
		t.Errorf("rm -rf: %d %s, want deny naming no_rm_rf", status, body)
	}
}

// TestCodexPreToolUseAskWait checks the default (and ask=wait): a
// PreToolUse ask waits for a person, whose allow is no decision and whose
// deny (or no answer) is a deny; allow and deny answer at once; any other
// ask value is refused.
func TestCodexPreToolUseAskWait(t *testing.T) {
	hs := newHookServer(t, 10*time.Second)
	const path = "/api/v1/hooks/codex?ask=wait"
	_, body := hs.post(t, hs.agent, "/api/v1/hooks/codex?wait_seconds=0", payload(t, "codex/pretooluse-bash.json"))
	if h := decodeTo[api.CodexPreToolUseOutput](t, body).HookSpecificOutput; h == nil || h.PermissionDecision != "deny" {
		t.Errorf("an unanswered ask with no ask parameter: %s, want a deny", body)
	}
	doc := payload(t, "codex/pretooluse-bash.json")
	if body := hs.askAnswered(t, path, doc, approval.ChoiceAllowOnce, ""); strings.TrimSpace(string(body)) != "{}" {
		t.Errorf("an ask a person allowed: %s, want {}", body)
	}
	body = hs.askAnswered(t, path, withMembers(t, doc, map[string]any{"tool_input": map[string]any{"command": "make deploy"}}), approval.ChoiceDeny, "")
	if h := decodeTo[api.CodexPreToolUseOutput](t, body).HookSpecificOutput; h == nil || h.PermissionDecision != "deny" || !strings.Contains(h.PermissionDecisionReason, "alice denied") {
		t.Errorf("an ask a person denied: %s, want a deny naming alice", body)
	}
	_, body = hs.post(t, hs.agent, path+"&wait_seconds=0", withMembers(t, doc, map[string]any{"tool_input": map[string]any{"command": "make"}}))
	if h := decodeTo[api.CodexPreToolUseOutput](t, body).HookSpecificOutput; h == nil || h.PermissionDecision != "deny" || !strings.Contains(h.PermissionDecisionReason, "no one answered") {
		t.Errorf("an unanswered ask: %s, want a deny saying so", body)
	}
	start := time.Now()
	_, body = hs.post(t, hs.agent, path, withMembers(t, doc, map[string]any{"tool_input": map[string]any{"command": "npm test"}}))
	if strings.TrimSpace(string(body)) != "{}" || time.Since(start) > 3*time.Second {
		t.Errorf("an allow with ask=wait: %s after %v, want {} at once", body, time.Since(start))
	}
	status, body := hs.post(t, hs.agent, "/api/v1/hooks/codex?ask=later", doc)
	if e := decodeTo[apiErr](t, body); status != 400 || len(e.Error.Details) == 0 || e.Error.Details[0].Field != "ask" {
		t.Errorf("ask=later: %d %s, want 400 naming ask", status, body)
	}
}
