package api_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
)

// TestHookBookkeepingTools checks the agents' current tool names: a
// bookkeeping tool (a to-do, a plan, a sub-agent) that the policy does not
// name is allowed at once instead of waiting for a person, a policy that
// names it still decides, a tool that is not bookkeeping (a skill, which
// can bring hooks and scripts) keeps the catch-all ask, and the renamed
// search and read tools of Gemini CLI 0.61 map onto ours.
func TestHookBookkeepingTools(t *testing.T) {
	policy := strings.Replace(hookPolicy, "    mcp_free_search: deny\n", "    mcp_free_search: deny\n    update_plan: deny\n", 1)
	hs := newHookServerWith(t, policy, api.Deps{HookWait: time.Second})
	event := func(agent, tool string, input map[string]any) []byte {
		name := "PreToolUse"
		if agent == "gemini" {
			name = "BeforeTool"
		}
		b, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": "/ws", "hook_event_name": name,
			"tool_name": tool, "tool_input": input})
		return b
	}
	cases := []struct {
		note  string
		agent string
		tool  string
		input map[string]any
		allow bool
	}{
		{note: "Claude Code TodoWrite", agent: "claude-code", tool: "TodoWrite", input: map[string]any{"todos": []any{}}, allow: true},
		{note: "Claude Code Agent (its calls are hooked too)", agent: "claude-code", tool: "Agent", input: map[string]any{"prompt": "x"}, allow: true},
		{note: "Claude Code ExitPlanMode", agent: "claude-code", tool: "ExitPlanMode", input: map[string]any{"plan": "x"}, allow: true},
		{note: "Claude Code Skill is not bookkeeping", agent: "claude-code", tool: "Skill", input: map[string]any{"skill": "x"}},
		{note: "Claude Code CronCreate is not bookkeeping", agent: "claude-code", tool: "CronCreate", input: map[string]any{"cron": "* * * * *"}},
		{note: "Gemini update_topic", agent: "gemini", tool: "update_topic", input: map[string]any{"topic": "x"}, allow: true},
		{note: "Gemini write_todos", agent: "gemini", tool: "write_todos", input: map[string]any{"todos": []any{}}, allow: true},
		{note: "Gemini invoke_agent", agent: "gemini", tool: "invoke_agent", input: map[string]any{"agent": "x"}, allow: true},
		{note: "Gemini activate_skill is not bookkeeping", agent: "gemini", tool: "activate_skill", input: map[string]any{"name": "x"}},
		{note: "Gemini 0.61 grep_search is grep", agent: "gemini", tool: "grep_search", input: map[string]any{"pattern": "TODO", "dir_path": "/ws"}, allow: true},
		{note: "Gemini read_many_files is read_file", agent: "gemini", tool: "read_many_files", input: map[string]any{"include": []any{"src/**/*.go"}}, allow: true},
		{note: "Gemini read_many_files of /etc is no_etc", agent: "gemini", tool: "read_many_files", input: map[string]any{"include": []any{"/etc/shadow"}}},
		{note: "Codex spawn_agent", agent: "codex", tool: "spawn_agent", input: map[string]any{"message": "x"}, allow: true},
		{note: "Codex update_plan named by the policy: deny", agent: "codex", tool: "update_plan", input: map[string]any{"plan": []any{}}},
		{note: "Codex view_image is read_file", agent: "codex", tool: "view_image", input: map[string]any{"path": "/ws/a.png"}, allow: true},
		{note: "Codex view_image of /etc is no_etc", agent: "codex", tool: "view_image", input: map[string]any{"path": "/etc/shadow"}},
	}
	for _, c := range cases {
		status, body := hs.post(t, hs.agent, "/api/v1/hooks/"+c.agent+"?wait_seconds=0", event(c.agent, c.tool, c.input))
		select {
		case <-hs.observed:
		default:
		}
		if status != 200 {
			t.Errorf("%s: status %d %s", c.note, status, body)
			continue
		}
		denied := strings.Contains(string(body), `"deny"`)
		if c.allow == denied {
			t.Errorf("%s: answer %s, want allow %v", c.note, body, c.allow)
		}
	}
}
