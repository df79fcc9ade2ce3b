package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// importConfig is a policy with a comment the import must keep.
const importConfig = `# the team's policy; keep this comment
permissions:
  schema: tiered_policy
  defaults: {"*": ask}  # ask what no rule names
  external_directory: {"*": ask}
  rules:
    # ours already: the import must not add it again under its own id
    - {id: no_curl, tools: bash, match_type: command, pattern: "curl *", action: deny}
`

// TestImportWritesThroughTheAPI runs the real `toolgate import` against a
// real server: without --write nothing changes; with it the converted
// rules land in config.yaml with its comments kept and decide as the
// agent would, through the agent's own hook route and tool names; a second
// run writes nothing; a file with entries toolgate cannot carry exits 3.
func TestImportWritesThroughTheAPI(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: importConfig, BuiltinYAML: "rules: []\n"})
	ws := s.Workspace
	settings := filepath.Join(ws, ".claude", "settings.json")
	sample, err := os.ReadFile("../importer/testdata/claude-settings-docs.json")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, settings, string(sample))
	run := func(args ...string) cliResult { return runCLI(t, ws, s.URL, s.Token, "", args...) }

	before := s.ReadFile("config.yaml")
	r := run("import", "claude-code", settings)
	if r.code != 0 || !strings.Contains(r.stdout, "pattern: curl *") || !strings.Contains(r.stdout, "re:^"+ws+`/\.env(?:/.*)?$`) {
		t.Fatalf("import without --write: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if s.ReadFile("config.yaml") != before {
		t.Fatal("import without --write changed config.yaml")
	}

	r = run("import", "claude-code", settings, "--write")
	if r.code != 0 || !strings.Contains(r.stderr, "wrote 6 changes; already in the policy: 1") {
		t.Fatalf("import --write: exit %d\n%s", r.code, r.stderr)
	}
	cfg := s.ReadFile("config.yaml")
	for _, want := range []string{"# the team's policy; keep this comment", "# ask what no rule names", "import_claude_deny_read_env", "source: import:claude-code", "# ours already"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config.yaml lacks %q:\n%s", want, cfg)
		}
	}

	// The agent's own names, through its hook: Read of .env, Bash curl.
	hook := func(tool string, input map[string]any) string {
		body := map[string]any{"hook_event_name": "PreToolUse", "session_id": "s", "cwd": ws, "tool_name": tool, "tool_input": input}
		st, _, b := s.Call(s.Token, "POST", "/api/v1/hooks/claude-code?wait_seconds=0&ask=agent&workspace="+ws, body, nil)
		if st != 200 {
			t.Fatalf("hook %s: %d %s", tool, st, b)
		}
		var out struct {
			HookSpecificOutput struct {
				PermissionDecision string `json:"permissionDecision"`
			} `json:"hookSpecificOutput"`
		}
		_ = json.Unmarshal(b, &out)
		return out.HookSpecificOutput.PermissionDecision
	}
	for _, c := range []struct {
		tool  string
		input map[string]any
		want  string
	}{
		{"Read", map[string]any{"file_path": filepath.Join(ws, ".env")}, "deny"},
		{"Read", map[string]any{"file_path": filepath.Join(ws, "secrets", "k")}, "deny"},
		{"Grep", map[string]any{"pattern": "x", "path": filepath.Join(ws, ".env.local")}, "deny"},
		{"Bash", map[string]any{"command": "curl -s https://example.com"}, "deny"},
		{"Bash", map[string]any{"command": "npm run test -- --watch"}, "allow"},
		{"Bash", map[string]any{"command": "npm run lint"}, "allow"},
		{"Bash", map[string]any{"command": "npm run build"}, "ask"},
	} {
		if got := hook(c.tool, c.input); got != c.want {
			t.Errorf("%s %v: %q, Claude Code's settings give %s", c.tool, c.input, got, c.want)
		}
	}

	r = run("import", "claude-code", settings, "--write")
	if r.code != 0 || !strings.Contains(r.stderr, "wrote 0 changes; already in the policy: 7") {
		t.Errorf("second import --write: exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(cfg, "import_claude_deny_bash_curl") {
		t.Errorf("the import added a rule the policy had under another id:\n%s", cfg)
	}
	if after := s.ReadFile("config.yaml"); after != cfg {
		t.Errorf("a second import changed config.yaml:\n%s", after)
	}

	rules := filepath.Join(t.TempDir(), "default.rules")
	codex, err := os.ReadFile("../importer/testdata/codex-docs.rules")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, rules, string(codex))
	r = run("import", "codex", rules, "--write")
	if r.code != 3 || !strings.Contains(r.stderr, "not carried over: host_executable") ||
		strings.Contains(r.stderr, "does not match in toolgate") ||
		!strings.Contains(r.stderr, "toolgate import: wrote 3 changes") {
		t.Errorf("codex import: exit %d, want 3 (host_executable not carried, every example carried), 3 rules written\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The examples the server accepted are in config.yaml, under their rules.
	cfg = s.ReadFile("config.yaml")
	for _, want := range []string{"- gh pr view 7888\n", "- gh pr view --repo openai/codex\n", "- gh pr view 7888 --json title,body,comments\n",
		"no_match:\n", "- gh pr --repo openai/codex view 7888\n", "- git push origin main\n", "- git status\n"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config.yaml lacks the example %q:\n%s", want, cfg)
		}
	}
	st, _, b := s.Call(s.Token, "POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "git push origin main"}, "workspace": ws}, nil)
	if st != 200 || !strings.Contains(string(b), `"level":"ask"`) || !strings.Contains(string(b), "import_codex_prompt_git_push") {
		t.Errorf("evaluate git push after the codex import: %d %s", st, b)
	}

	r = run("import", "cursor", rules)
	if r.code != 1 || !strings.Contains(r.stderr, "unknown agent") {
		t.Errorf("unknown agent: exit %d %s", r.code, r.stderr)
	}
}

// TestImportEveryAgentWrites writes each agent's samples through the real
// CLI and server: every rule shape the importer makes (args rules on MCP
// server wildcards and network tools, command regexps, tool levels of
// tools toolgate does not know) is accepted by the API, and decides.
func TestImportEveryAgentWrites(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: importConfig, BuiltinYAML: "rules: []\n"})
	ws := s.Workspace
	run := func(args ...string) cliResult { return runCLI(t, ws, s.URL, s.Token, "", args...) }
	testdata, err := filepath.Abs("../importer/testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		agent, file string
		code        int
	}{
		{"gemini", "gemini-pickle-rick.toml", 0},
		{"gemini", "gemini-priority.toml", 3},
		{"opencode", "opencode-order.jsonc", 3},
		{"claude-code", "claude-permissions-forms.json", 3},
		{"codex", "codex-example.rules", 0},
	} {
		r := run("import", c.agent, filepath.Join(testdata, c.file), "--write", "--project", ws)
		if r.code != c.code || !strings.Contains(r.stderr, "toolgate import: wrote ") {
			t.Errorf("%s %s: exit %d, want %d\n%s", c.agent, c.file, r.code, c.code, r.stderr)
		}
	}
	// The policy in force has no problem (an inert imported rule would be one).
	if st, _, b := s.Call(s.Token, "GET", "/readyz", nil, nil); st != 200 || strings.Contains(string(b), "rules[") {
		t.Errorf("/readyz after the imports: %d %s", st, b)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"mcp__github__list_issues", map[string]any{}, "allow"},        // gemini mcpName, a server wildcard
		{"mcp__github__create_issue", map[string]any{"t": "x"}, "ask"}, // its higher-priority ask
		{"mcp__puppeteer__puppeteer_navigate", map[string]any{"url": "https://x"}, "ask"},
		{"delegate_to_agent", map[string]any{}, "allow"},                                          // a tool level of a tool toolgate does not know
		{"bash", map[string]any{"command": "python3 spawn_morty.py"}, "ask"},                      // claude's bare Bash ask beats gemini's regexp allow
		{"bash", map[string]any{"command": "git reset --hard"}, "deny"},                           // codex forbidden
		{"mcp_fetch_webpage", map[string]any{"url": "https://docs.example.com/a"}, "allow"},       // opencode URL pattern
		{"mcp_fetch_webpage", map[string]any{"url": "https://example.com.evil.net/"}, "ask"},      // claude domain rule: not this host
		{"edit_file", map[string]any{"file_path": filepath.Join(ws, "src", "a", "b.ts")}, "deny"}, // Edit(/src/**/*.ts)
	} {
		st, _, b := s.Call(s.Token, "POST", "/api/v1/evaluate", map[string]any{"tool_name": c.tool, "tool_args": c.args, "workspace": ws}, nil)
		if st != 200 || !strings.Contains(string(b), `"level":"`+c.want+`"`) {
			t.Errorf("%s %v: %d %s, want %s", c.tool, c.args, st, b, c.want)
		}
	}
	r := run("import", "gemini", filepath.Join(testdata, "gemini-pickle-rick.toml"), "--write")
	if r.code != 0 || !strings.Contains(r.stderr, "wrote 0 changes") {
		t.Errorf("second gemini import: exit %d\n%s", r.code, r.stderr)
	}
}
