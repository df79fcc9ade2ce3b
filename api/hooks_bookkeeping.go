package api

import (
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// The agents' bookkeeping tools act on nothing outside the agent's own
// session: its to-do list, its plan, its topic line, a question put to
// the person at the terminal, a sub-agent whose own tool calls go through
// the same hooks. Under a policy that does not name them they would all
// ask, and an agent would wait for a person at every to-do update; so a
// catch-all ask (the policy's "*" default, or no configuration) of one of
// them is answered allow, with the rule agentBookkeepingRule. A policy that
// names the tool, and any deny, still decide. Tools that load text which
// may run code later (Claude Code's Skill, Gemini's activate_skill, which
// can bring hooks or scripts), schedule work (CronCreate) or write files
// (EnterWorktree) are not bookkeeping and keep the policy's answer.
//
// The names are the agents' own, as their releases define them:
//   - Claude Code 2.1.328: the tool names in its native binary
//     (@anthropic-ai/claude-code-linux-x64, name:"TodoWrite", ...);
//   - Gemini CLI 0.61.0: the *_TOOL_NAME constants of its bundle
//     (@google/gemini-cli bundle/, WRITE_TODOS_TOOL_NAME = "write_todos", ...);
//   - Codex 0.169.0: the hook names of codex-rs/core/src/tools/hook_names.rs
//     (spawn_agent) and the tool names in its binary (update_plan,
//     request_user_input, wait_agent, send_input, close_agent).

// agentBookkeepingRule is the matched rule of a bookkeeping tool's allow.
const agentBookkeepingRule = "hook:agent_bookkeeping"

var claudeCodeBookkeeping = toolSet("TodoWrite", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "TaskOutput",
	"TaskStop", "KillShell", "EnterPlanMode", "ExitPlanMode", "AskUserQuestion", "Agent", "Task", "ToolSearch")

var geminiBookkeeping = toolSet("write_todos", "update_topic", "ask_user", "enter_plan_mode", "exit_plan_mode",
	"complete_task", "tracker_create_task", "tracker_update_task", "tracker_get_task", "tracker_list_tasks",
	"tracker_add_dependency", "tracker_visualize", "invoke_agent", "get_internal_docs")

var codexBookkeeping = toolSet("update_plan", "request_user_input", "spawn_agent", "wait_agent", "send_input", "close_agent",
	"get_goal", "create_goal", "update_goal")

// catchAllRules are the matched rules of an answer no configuration named
// the tool for.
var catchAllRules = toolSet("default", "defaults.*", "tiered_policy:defaults.*", "tools.*", "tiered_policy:tools.*")

func toolSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// bookkeeping turns a catch-all ask of one of the agent's bookkeeping
// tools into an allow; any other decision is returned as it is.
func (a hookAgent) bookkeeping(tool string, d engine.Decision) engine.Decision {
	if d.Level != policy.Ask || !a.bookkeepingTools[tool] || !catchAllRules[d.MatchedRule] {
		return d
	}
	return engine.Decision{Level: policy.Allow, MatchedRule: agentBookkeepingRule,
		Reason: "Allowed: " + tool + " is the agent's own bookkeeping (plans, to-dos, questions, sub-agents) and acts on nothing outside its session",
		Trace:  d.Trace}
}
