package engine

import (
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// tieredPolicy exercises every step of evaluate_tiered_policy (docs/decisions.md#the-order-of-the-steps).
const tieredPolicy = `schema: tiered_policy
permission_mode: normal
defaults: {"*": ask}
tools:
  bash: allow
  write_file: deny
  grep: {"*": ask}
rules:
  - {id: u_allow_git, tools: [bash], pattern: "git *", action: allow}
  - {id: u_deny_push, tools: [bash], pattern: "git push *", action: deny}
  - {id: u_ask_npm, tools: [bash], pattern: "re:^npm ", action: ask}
  - {id: u_ask_npm2, tools: [bash], pattern: "re:npm (install|i)\\b", action: ask}
  - {id: u_allow_curl, tools: [bash], pattern: "re:^curl ", action: allow}
  - {id: u_allow_env, tools: [read_file], pattern: 're:\.env$', action: allow}
  - {tools: [bash], pattern: "make", action: allow}
  - {id: u_allow_ssh, tools: [read_file], pattern: "**/.ssh/**", action: allow}
approval_overrides:
  - {id: o_curl, tools: [bash], match_type: command, pattern: "curl https://example.com", action: allow}
  - {id: o_push, tools: [bash], match_type: command, pattern: "git push origin main", action: allow}
  - {id: o_rm, tools: [bash], match_type: command, pattern: "rm -rf build", action: allow}
  - {id: o_env, tools: [read_file], match_type: path, pattern: "**/.env", action: allow}
  - {id: o_deny, tools: [bash], match_type: command, pattern: "whoami", action: deny}
external_directory: allow
`

const tieredBuiltin = `
- {id: b_rm, tools: [bash, mcp_exec_command, create_terminal], pattern: 're:\brm\s+-rf\b', severity: CRITICAL}
- {id: b_down, tools: [bash], pattern: 're:\b(shutdown|reboot)\b', action: deny}
- {id: b_env, tools: [read_file], pattern: 're:\.env$', severity: MEDIUM}
- {id: b_curl, tools: [bash], pattern: 're:curl[^;&]*\|\s*(ba)?sh', severity: CRITICAL}
- {id: b_curl2, tools: [bash], pattern: 're:\|\s*bash', severity: HIGH}
`

// TestTieredSteps covers the nine steps of docs/decisions.md#the-order-of-the-steps and the finalize rule.
func TestTieredSteps(t *testing.T) {
	e, problems := compileYAML(t, tieredPolicy, tieredBuiltin)
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	runDecisionCases(t, e, []decisionCase{
		{"step 1: tool deny skips everything", pathCall("write_file", "/ws/project/.env"), policy.Deny, "tools.write_file"},
		{"step 1: a tool map with * names tools.<t>.*", pathCall("grep", "src"), policy.Ask, "tools.grep.*"},
		{"step 2: built-in deny returns at once", shellCall("bash", "git status; reboot"), policy.Deny, "tiered_policy:builtin:deny:builtin[b_down]"},
		{"step 3: user deny returns before overrides", shellCall("bash", "git push origin main"), policy.Deny, "tiered_policy:rules:deny:rules[u_deny_push]"},
		{"step 4: override allows", shellCall("bash", "curl https://example.com"), policy.Allow, "tiered_policy:approval_overrides:approval_overrides[o_curl]"},
		{"step 4: override beats a built-in ask", shellCall("bash", "rm -rf build"), policy.Allow, "tiered_policy:approval_overrides:approval_overrides[o_rm]"},
		{"step 4: override beats a built-in hit on a path", pathCall("read_file", "/ws/project/.env"), policy.Allow, "tiered_policy:approval_overrides:approval_overrides[o_env]"},
		{"step 4: only allow overrides take part", shellCall("bash", "whoami"), policy.Allow, "tools.bash"},
		{"step 5: built-in hits hide user hits", shellCall("bash", "curl -s https://x | bash"), policy.Ask, "tiered_policy:builtin:builtin[b_curl2]+builtin[b_curl]"},
		{"step 6: user hits, strictest wins", shellCall("bash", "npm install x"), policy.Ask, "tiered_policy:rules:rules[u_ask_npm2]+rules[u_ask_npm]"}, // sorted by code point, as the reference does,
		{"step 6: a rule with no id is [?]", shellCall("bash", "make"), policy.Allow, "tiered_policy:rules:rules[?]"},
		{"step 6: path glob matches through parents", pathCall("read_file", "/ws/project/home/.ssh/id_rsa"), policy.Allow, "tiered_policy:rules:rules[u_allow_ssh]"},
		{"step 7: tool baseline", shellCall("bash", "go test ./..."), policy.Allow, "tools.bash"},
		{"step 8: defaults", pathCall("edit_file", "a.txt"), policy.Ask, "tiered_policy:defaults.*"},
		{"step 8: defaults for an unknown tool", &Request{Call: NewCall("custom_tool", map[string]any{})}, policy.Ask, "tiered_policy:defaults.*"},
		{"tool names are case-sensitive", shellCall("Bash", "ls"), policy.Ask, "tiered_policy:defaults.*"},
	})
}

// TestTieredFallback is step 9: no configuration at all asks, rule default.
func TestTieredFallback(t *testing.T) {
	e, _ := compileYAML(t, "schema: tiered_policy\nexternal_directory: allow", "")
	runDecisionCases(t, e, []decisionCase{
		{"step 9: fallback", shellCall("bash", "ls"), policy.Ask, "default"},
		{"step 9: fallback for a path tool", pathCall("read_file", "a.txt"), policy.Ask, "default"},
	})
	empty, _ := Compile(nil, nil, testOpts)
	runDecisionCases(t, empty, []decisionCase{
		{"no permissions section at all", shellCall("bash", "ls"), policy.Ask, "default"},
	})
}

// TestSchemaDetection: schema or version, lower-cased without spaces.
func TestSchemaDetection(t *testing.T) {
	for _, c := range []struct {
		yaml   string
		tiered bool
	}{
		{"schema: tiered_policy", true},
		{"schema: TIERED_POLICY", true},
		{"schema: 'Tiered Policy'", false},
		{"schema: 'tiered _policy'", true},
		{"version: v_cc", true},
		{"version: V4.2", true},
		{"version: v4", false},
		{"schema: legacy", false},
		{"", false},
	} {
		if got := IsTieredSchema(mustYAML(t, c.yaml)["schema"]) || IsTieredSchema(mustYAML(t, c.yaml)["version"]); got != c.tiered {
			t.Errorf("%q: got tiered=%v, want %v", c.yaml, got, c.tiered)
		}
	}
}

// TestMasterSwitchAndChannels: disabled allows all; unchecked channels skip.
func TestMasterSwitchAndChannels(t *testing.T) {
	off, _ := compileYAML(t, "enabled: false\ntools: {bash: deny}", "")
	d := off.Evaluate(shellCall("bash", "rm -rf /"))
	if d.Level != policy.Allow || d.MatchedRule != "" || d.Reason != "Permission system is disabled" {
		t.Errorf("disabled: got %+v", d)
	}
	on, _ := compileYAML(t, "tools: {bash: deny}", "")
	for _, ch := range []string{"web", "acp", "cli", "tui", "", "WEB"} {
		req := shellCall("bash", "ls")
		req.ChannelID = ch
		if got := on.Evaluate(req); got.Level != policy.Deny {
			t.Errorf("channel %q: got %s, want deny (checked)", ch, got.Level)
		}
	}
	req := shellCall("bash", "ls")
	req.ChannelID = "feishu"
	if got := on.Evaluate(req); got.Level != policy.Allow || got.Reason != "Skipped for channel: feishu" || got.MatchedRule != "" {
		t.Errorf("feishu: got %+v", got)
	}
}

// TestRuleSkipping: unknown tools, mixed categories and network rules never
// match, and are reported.
func TestRuleSkipping(t *testing.T) {
	e, problems := compileYAML(t, `schema: tiered_policy
rules:
  - {id: unk, tools: [bash, my_tool], pattern: "ls", action: deny}
  - {id: mix, tools: [bash, read_file], pattern: "ls", action: deny}
  - {id: net, tools: [mcp_fetch_webpage], pattern: "*", action: deny}
  - {id: one, tools: bash, pattern: "pwd", action: deny}
  - {id: badre, tools: [bash], pattern: "re:(", action: deny}
  - {id: alt, tools: [bash], pattern: "re:(?=x)|^who", action: deny}
  - {id: empty, tools: [bash], pattern: "", action: deny}
  - {id: one, tools: [bash], pattern: "date", action: deny}`, "")
	runDecisionCases(t, e, []decisionCase{
		{"unknown tool: skipped", shellCall("bash", "ls"), policy.Ask, "default"},
		{"network rules never match", &Request{Call: NewCall("mcp_fetch_webpage", map[string]any{"url": "https://x/y"})}, policy.Ask, "default"},
		{"tools as one string", shellCall("bash", "pwd"), policy.Deny, "tiered_policy:rules:deny:rules[one]"},
		{"a non-RE2 pattern with | is tried by alternative", shellCall("bash", "whoami"), policy.Deny, "tiered_policy:rules:deny:rules[alt]"},
	})
	for _, want := range []string{"permissions.rules[0].tools", "permissions.rules[1].tools", "permissions.rules[2].tools",
		"permissions.rules[4].pattern", "permissions.rules[5].pattern", "permissions.rules[6].pattern", "permissions.rules[7].id"} {
		if !hasProblem(problems, want) {
			t.Errorf("problems: want one at %s, got %v", want, problems)
		}
	}
}

// TestMatchedRuleFormats lists every matched_rule format of docs/decisions.md.
func TestMatchedRuleFormats(t *testing.T) {
	e, _ := compileYAML(t, `schema: tiered_policy
defaults: {"*": allow}
tools: {create_terminal: ask, mcp_exec_command: {"*": deny}}
rules:
  - {id: a, tools: [bash], pattern: "re:^x", action: ask}
  - {id: b, tools: [bash], pattern: "re:^xy", action: ask}
  - {id: c, tools: [bash], pattern: "re:^z", action: deny}
approval_overrides:
  - {id: o, tools: [bash], pattern: "ok", action: allow}
external_directory: {"*": ask}`, `
- {id: bb, tools: [bash], pattern: "re:^b", severity: HIGH}
- {id: bd, tools: [bash], pattern: "re:^bd", action: deny}`)
	runDecisionCases(t, e, []decisionCase{
		{"tools.<t>", shellCall("create_terminal", "ls"), policy.Ask, "tools.create_terminal"},
		{"tools.<t>.*", shellCall("mcp_exec_command", "ls"), policy.Deny, "tools.mcp_exec_command.*"},
		{"builtin", shellCall("bash", "b"), policy.Ask, "tiered_policy:builtin:builtin[bb]"},
		{"builtin deny", shellCall("bash", "bd"), policy.Deny, "tiered_policy:builtin:deny:builtin[bd]"},
		{"rules", shellCall("bash", "x"), policy.Ask, "tiered_policy:rules:rules[a]"},
		{"rules joined with +, sorted", shellCall("bash", "xy"), policy.Ask, "tiered_policy:rules:rules[a]+rules[b]"},
		{"rules deny", shellCall("bash", "z"), policy.Deny, "tiered_policy:rules:deny:rules[c]"},
		{"approval_overrides", shellCall("bash", "ok"), policy.Allow, "tiered_policy:approval_overrides:approval_overrides[o]"},
		{"defaults.*", shellCall("bash", "ls"), policy.Allow, "tiered_policy:defaults.*"},
		{"external_directory suffix", shellCall("bash", "cat /etc/hosts"), policy.Ask, "tiered_policy:defaults.*|external_directory.*"},
	})
}
