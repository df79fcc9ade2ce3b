package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/approval"
)

// TestClaudeCodePreToolUse posts the documentation's PreToolUse payloads
// and checks Claude Code's answer: permissionDecision and its reason. An
// ask waits for a person (here no one answers within the hook's second)
// and is answered deny; only ask=agent hands "ask" back to Claude Code.
func TestClaudeCodePreToolUse(t *testing.T) {
	hs := newHookServer(t, time.Second)
	rmrf := withMembers(t, payload(t, "claude-code/pretooluse-bash.json"), map[string]any{"tool_input": map[string]any{"command": "rm -rf node_modules"}})
	cases := []struct {
		note   string
		query  string
		body   []byte
		want   string
		reason string
	}{
		{note: "Bash npm test: allowed by rule", body: payload(t, "claude-code/pretooluse-bash.json"), want: "allow", reason: "npm_test_ok"},
		{note: "Bash rm -rf: denied by rule", body: rmrf, want: "deny", reason: "no_rm_rf"},
		{note: "Read", body: payload(t, "claude-code/pretooluse-read.json"), want: "allow"},
		{note: "Write", body: payload(t, "claude-code/pretooluse-write.json"), want: "deny"},
		{note: "Edit: an ask no one answers is a deny", body: payload(t, "claude-code/pretooluse-edit.json"), want: "deny", reason: "no one answered"},
		{note: "Edit with ask=agent: the ask goes back to Claude Code", query: "?ask=agent", body: payload(t, "claude-code/pretooluse-edit.json"), want: "ask"},
		{note: "Edit with ask=wait, as the default", query: "?ask=wait&wait_seconds=0", body: payload(t, "claude-code/pretooluse-edit.json"), want: "deny", reason: "no one answered"},
		{note: "Glob", body: payload(t, "claude-code/pretooluse-glob.json"), want: "allow"},
		{note: "Grep", body: payload(t, "claude-code/pretooluse-grep.json"), want: "allow"},
		{note: "WebFetch", body: payload(t, "claude-code/pretooluse-webfetch.json"), want: "allow"},
		{note: "WebSearch", body: payload(t, "claude-code/pretooluse-websearch.json"), want: "deny"},
		{note: "an MCP tool is kept and falls to the default (ask, unanswered)", want: "deny", reason: "no one answered",
			body: withMembers(t, payload(t, "claude-code/pretooluse-bash.json"), map[string]any{"tool_name": "mcp__memory__create_entities"})},
		{note: "Read of /etc: denied by rule on the path", want: "deny", reason: "no_etc",
			body: withMembers(t, payload(t, "claude-code/pretooluse-read.json"), map[string]any{"tool_input": map[string]any{"file_path": "/etc/passwd"}})},
	}
	for _, c := range cases {
		status, body := hs.post(t, hs.agent, "/api/v1/hooks/claude-code"+c.query, c.body)
		if status != 200 {
			t.Errorf("%s: status %d (%s)", c.note, status, body)
			continue
		}
		out := decodeTo[api.ClaudePreToolUseOutput](t, body).HookSpecificOutput
		if out.HookEventName != "PreToolUse" || out.PermissionDecision != c.want {
			t.Errorf("%s: answer %s, want permissionDecision %s", c.note, body, c.want)
		}
		if !strings.HasPrefix(out.PermissionDecisionReason, "toolgate: ") || !strings.Contains(out.PermissionDecisionReason, c.reason) {
			t.Errorf("%s: reason %q, want one from toolgate naming %q", c.note, out.PermissionDecisionReason, c.reason)
		}
	}
}

// TestClaudeCodePermissionRequest posts the documentation's
// PermissionRequest payload and variants: the policy's deny answers at
// once; anything else waits for a person, whose allow or deny (with the
// comment) is the answer, and no answer within the wait is a deny. The
// policy's allow does not answer it: Claude Code raised this ask itself.
func TestClaudeCodePermissionRequest(t *testing.T) {
	hs := newHookServer(t, 10*time.Second)
	const path = "/api/v1/hooks/claude-code"
	doc := payload(t, "claude-code/permissionrequest-bash.json")
	command := func(cmd string) []byte {
		return withMembers(t, doc, map[string]any{"tool_input": map[string]any{"command": cmd}})
	}
	decision := func(body []byte) api.PermissionAnswer {
		out := decodeTo[api.ClaudePermissionRequestOutput](t, body).HookSpecificOutput
		if out.HookEventName != "PermissionRequest" {
			t.Errorf("hookEventName %q in %s", out.HookEventName, body)
		}
		return out.Decision
	}

	_, body := hs.post(t, hs.agent, path, doc)
	if d := decision(body); d.Behavior != "deny" || !strings.Contains(d.Message, "no_rm_rf") {
		t.Errorf("the doc's rm -rf: %s, want deny naming rule no_rm_rf", body)
	}
	_, body = hs.post(t, hs.agent, path+"?wait_seconds=0", command("npm test"))
	if d := decision(body); d.Behavior != "deny" || !strings.Contains(d.Message, "no one answered") {
		t.Errorf("npm test, allowed by the policy, no one answering: %s, want deny", body)
	}
	body = hs.askAnswered(t, path, command("npm test"), approval.ChoiceAllowOnce, "")
	if d := decision(body); d.Behavior != "allow" {
		t.Errorf("npm test, allowed by the policy and a person: %s, want allow", body)
	}
	_, body = hs.post(t, hs.agent, path+"?ask=agent", command("npm test"))
	if strings.TrimSpace(string(body)) != "{}" {
		t.Errorf("npm test with ask=agent: %s, want no decision, so Claude Code prompts", body)
	}
	body = hs.askAnswered(t, path, command("make build"), approval.ChoiceAllowOnce, "")
	if d := decision(body); d.Behavior != "allow" {
		t.Errorf("an ask a person allowed: %s, want allow", body)
	}
	body = hs.askAnswered(t, path, command("make deploy"), approval.ChoiceDeny, "not on a Friday")
	if d := decision(body); d.Behavior != "deny" || !strings.Contains(d.Message, "alice denied") || !strings.Contains(d.Message, "not on a Friday") {
		t.Errorf("an ask a person denied: %s, want deny with who and the comment", body)
	}
	start := time.Now()
	_, body = hs.post(t, hs.agent, path+"?wait_seconds=1", command("make release"))
	if d := decision(body); d.Behavior != "deny" || !strings.Contains(d.Message, "no one answered") {
		t.Errorf("an ask no one answered: %s, want deny saying so", body)
	}
	if waited := time.Since(start); waited < time.Second || waited > 5*time.Second {
		t.Errorf("wait_seconds=1 waited %v", waited)
	}
}
