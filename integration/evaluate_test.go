package integration

import (
	"strings"
	"testing"
)

// evaluateConfig is a policy that exercises each step of docs/decisions.md#the-order-of-the-steps.
const evaluateConfig = `# a user's config with other sections
model:
  name: some-model # kept
permissions:
  enabled: true
  schema: tiered_policy
  permission_mode: normal
  defaults: {"*": ask}
  tools:
    read_file: allow
    bash: ask
    write_file: deny
  rules:
    - {id: ls_ok, tools: [bash], pattern: "ls *", action: allow}
    - {id: echo_ok, tools: [bash], pattern: 're:^echo ', action: allow}
    - {id: no_env, tools: [read_file], pattern: 're:\.env$', action: deny}
    - {id: git_push, tools: [bash], pattern: "git push *", severity: CRITICAL}
  approval_overrides:
    - {id: o_status, tools: [bash], match_type: command, pattern: "git status", action: allow, source: user_approval}
  external_directory:
    "*": ask
    /opt/shared: allow
`

// TestEvaluateOverHTTP checks a dozen decisions of the real binary.
func TestEvaluateOverHTTP(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: evaluateConfig})
	ws := s.Workspace
	cases := []struct {
		note      string
		body      map[string]any
		wantLevel string
		wantRule  string
	}{
		{"tool level allow", map[string]any{"tool_name": "read_file", "tool_args": map[string]any{"path": "src/main.go"}}, "allow", "tools.read_file"},
		{"tool deny skips everything", map[string]any{"tool_name": "write_file", "tool_args": map[string]any{"path": "a.txt"}}, "deny", "tools.write_file"},
		{"user rule allow", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "ls -la"}}, "allow", "tiered_policy:rules:rules[ls_ok]"},
		{"user rule deny", map[string]any{"tool_name": "read_file", "tool_args": map[string]any{"path": ws + "/.env"}}, "deny", "tiered_policy:rules:deny:rules[no_env]"},
		{"severity critical asks in normal mode", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "git push origin main"}}, "ask", "tiered_policy:rules:rules[git_push]"},
		{"approval override", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "git status"}}, "allow", "tiered_policy:approval_overrides:approval_overrides[o_status]"},
		{"escalation of allow on operators", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "echo hi > out.txt"}}, "ask", "tiered_policy:rules:rules[echo_ok]"},
		{"builtin deny beats user allow", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "ls && shutdown -h now"}}, "deny", ""},
		{"tool baseline", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "make build"}}, "ask", "tools.bash"},
		{"defaults for an unknown tool", map[string]any{"tool_name": "custom_tool", "tool_args": map[string]any{}}, "ask", "tiered_policy:defaults.*"},
		{"external path asks", map[string]any{"tool_name": "read_file", "tool_args": map[string]any{"path": "/etc/hosts"}}, "ask", "tools.read_file|external_directory.*"},
		{"trusted external prefix", map[string]any{"tool_name": "read_file", "tool_args": map[string]any{"path": "/opt/shared/x.csv"}}, "allow", "tools.read_file"},
		{"skipped channel", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "rm -rf /"}, "channel_id": "feishu"}, "allow", ""},
		{"digital persona: ask becomes deny", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "make"}, "channel_id": "feishu", "scope": map[string]any{"avatar_mode": true, "group_digital_avatar": true, "principal_user_id": "u1"}}, "deny", "tools.bash"},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			status, body := s.Do("POST", "/api/v1/evaluate", c.body)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			got := DecodeJSON[struct {
				Level       string  `json:"level"`
				MatchedRule *string `json:"matched_rule"`
				Reason      string  `json:"reason"`
			}](t, body)
			if got.Level != c.wantLevel {
				t.Errorf("level: got %q, want %q (%s)", got.Level, c.wantLevel, body)
			}
			rule := ""
			if got.MatchedRule != nil {
				rule = *got.MatchedRule
			}
			if c.wantRule != "" && rule != c.wantRule {
				t.Errorf("matched_rule: got %q, want %q", rule, c.wantRule)
			}
			if c.wantRule == "" && c.wantLevel == "deny" && !strings.Contains(rule, "tiered_policy:builtin:deny:") {
				t.Errorf("matched_rule: got %q, want a built-in deny", rule)
			}
		})
	}
}

// TestEvaluateBadInput checks the 400s and 401 of openapi.yaml.
func TestEvaluateBadInput(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	cases := []struct {
		note   string
		token  string
		body   any
		status int
		field  string
	}{
		{"no token", "", `{"tool_name":"bash"}`, 401, ""},
		{"wrong token", "nope-nope-nope-nope", `{"tool_name":"bash"}`, 401, ""},
		{"bad JSON", s.Token, `{"tool_name":`, 400, ""},
		{"missing tool_name", s.Token, `{"tool_args":{}}`, 400, "tool_name"},
		{"tool_args not an object", s.Token, `{"tool_name":"bash","tool_args":[1]}`, 400, "tool_args"},
		{"unknown field", s.Token, `{"tool_name":"bash","toolargs":{}}`, 400, "toolargs"},
		// Bodies two JSON parsers can read differently are refused, so a
		// caller cannot be allowed one call and run another.
		{"a member given twice", s.Token, `{"tool_name":"read_file","tool_name":"bash"}`, 400, "tool_name"},
		{"an argument given twice", s.Token, `{"tool_name":"bash","tool_args":{"command":"rm -rf ~","command":"ls"}}`, 400, "tool_args.command"},
		{"a member in other case", s.Token, `{"tool_name":"bash","Tool_Name":"read_file"}`, 400, "Tool_Name"},
		{"invalid UTF-8", s.Token, "{\"tool_name\":\"bash\",\"tool_args\":{\"command\":\"rm\xff -rf ~\"}}", 400, "tool_args.command"},
		{"a lone surrogate", s.Token, `{"tool_name":"bash","tool_args":{"command":"rm \ud800 -rf ~"}}`, 400, "tool_args.command"},
		{"data after the object", s.Token, `{"tool_name":"bash"} {"tool_name":"read_file"}`, 400, ""},
		{"body over 1 MiB", s.Token, `{"tool_name":"bash","tool_args":{"command":"` + strings.Repeat("a", 1<<20+10) + `"}}`, 413, ""},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			status, body := s.DoToken(c.token, "POST", "/api/v1/evaluate", c.body)
			if status != c.status {
				t.Fatalf("status: got %d, want %d (%s)", status, c.status, body)
			}
			e := DecodeJSON[struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
					Details []struct {
						Field string `json:"field"`
					} `json:"details"`
				} `json:"error"`
			}](t, body)
			if e.Error.Code == "" || e.Error.Message == "" {
				t.Errorf("error shape: got %s", body)
			}
			if c.field != "" && (len(e.Error.Details) == 0 || e.Error.Details[0].Field != c.field) {
				t.Errorf("details: got %s, want field %q", body, c.field)
			}
		})
	}
	if status, _ := s.DoToken("", "GET", "/healthz", nil); status != 200 {
		t.Errorf("healthz without a token: got %d, want 200", status)
	}
}
