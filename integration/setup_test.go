package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// agentPaths are the pinned agents' programs inside the cache that
// integration/agents/install.sh fills.
var agentPaths = map[string]string{
	"claude-code": "claude-code-2.1.328/node_modules/@anthropic-ai/claude-code-linux-x64/claude",
	"gemini":      "gemini-cli-0.61.0/node_modules/@google/gemini-cli/bundle/gemini.js",
	"codex":       "codex-0.169.0/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
	// The MCP server the gateway tests stand in front of (run with node).
	"server-filesystem": "server-filesystem-2026.8.31/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
}

// agentBinary is the path of a pinned agent's program. make test installs
// them first; outside CI a missing agent skips the test, in CI it fails it.
func agentBinary(t *testing.T, agent string) string {
	t.Helper()
	dir := os.Getenv("TOOLGATE_AGENTS_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "toolgate", "agents")
	}
	path := filepath.Join(dir, agentPaths[agent])
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (%v): make test installs it with integration/agents/install.sh", agent, err)
		}
		t.Skipf("%s is not installed: run integration/agents/install.sh", agent)
	}
	return path
}

// runCLIEnv runs the toolgate command in dir with exactly the environment
// given (plus PATH), as an agent would run it.
func runCLIEnv(t *testing.T, dir string, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(toolgateCLI(t), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return cliResult{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
}

// TestSetupAndDoctor wires all three agents into a fresh home with
// `toolgate setup` and checks them with `toolgate doctor` against the real
// server and the real Codex (whose app server records and reports its
// trust of the hooks): every way the wiring can be broken that the agent
// would not tell (no token, Codex's trust lost by an edit, a folder Gemini
// does not trust, the server down) makes doctor fail and say which.
func TestSetupAndDoctor(t *testing.T) {
	codex := agentBinary(t, "codex")
	s := StartServer(t, ServerOptions{})
	status, body := s.Do("POST", "/api/v1/tokens", map[string]any{"name": "agents", "role": "agent"})
	if status != 201 && status != 200 {
		t.Fatalf("create an agent token: %d %s", status, body)
	}
	agentToken := DecodeJSON[struct {
		Secret string `json:"secret"`
	}](t, body).Secret
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	tokenFile := filepath.Join(home, "agent_token")
	writeFile(t, tokenFile, agentToken)
	writeFile(t, filepath.Join(proj, "README.md"), "a project\n")
	env := []string{"HOME=" + home, "TOOLGATE_URL=" + s.URL, "TOOLGATE_TOKEN=" + agentToken}
	run := func(env []string, args ...string) cliResult { return runCLIEnv(t, proj, env, args...) }

	for _, args := range [][]string{
		{"setup", "claude-code"},
		{"setup", "gemini", "--token-file", tokenFile},
		{"setup", "codex", "--token-file", tokenFile, "--codex-bin", codex},
	} {
		if r := run(env, args...); r.code != 0 {
			t.Fatalf("toolgate %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := run(env, "setup", "codex", "--token-file", tokenFile, "--codex-bin", codex); r.code != 0 || !strings.Contains(r.stdout, "nothing to change") {
		t.Errorf("a second setup codex: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	config, _ := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if strings.Count(string(config), "trusted_hash") != 2 {
		t.Errorf("Codex's config.toml does not trust the two hooks:\n%s", config)
	}
	trusted := append(env, "GEMINI_CLI_TRUST_WORKSPACE=true")
	cases := []struct {
		note  string
		env   []string
		setup func()
		args  []string
		code  int
		want  []string
	}{
		{note: "all three wired, Gemini's folder trusted by the environment", env: trusted, args: []string{"doctor", "--codex-bin", codex}, code: 0,
			want: []string{"ok    claude-code: the hook, run as the agent runs it, denies", "ok    codex: Codex trusts toolgate's 2 hook(s)",
				"ok    codex: the hook, run as the agent runs it, denies", "ok    gemini: the hook, run as the agent runs it, denies", "every check passed"}},
		{note: "Gemini does not trust this folder", env: env, args: []string{"doctor", "gemini"}, code: 1,
			want: []string{"FAIL  gemini: Gemini CLI does not trust " + proj}},
		{note: "Gemini trusts the folder's parent", env: env, args: []string{"doctor", "gemini"}, code: 0,
			setup: func() {
				writeFile(t, filepath.Join(home, ".gemini", "trustedFolders.json"), `{"`+filepath.Join(proj, "x")+`": "TRUST_PARENT"}`)
			},
			want: []string{"ok    gemini: Gemini CLI trusts " + proj}},
		{note: "Claude Code without the token in its environment", env: []string{"HOME=" + home, "TOOLGATE_URL=" + s.URL}, args: []string{"doctor", "claude-code"}, code: 1,
			want: []string{"FAIL  claude-code: the hook, run as the agent runs it, does not answer with toolgate's deny", "401"}},
		{note: "a hand edit of Codex's hook loses Codex's trust", env: env, args: []string{"doctor", "codex", "--codex-bin", codex}, code: 1,
			setup: func() {
				path := filepath.Join(home, ".codex", "hooks.json")
				data, _ := os.ReadFile(path)
				writeFile(t, path, strings.Replace(string(data), "--wait 120", "--wait 5", 1))
			},
			want: []string{"FAIL  codex: Codex skips the hook"}},
		{note: "setup codex trusts it again", env: env, args: []string{"setup", "codex", "--token-file", tokenFile, "--codex-bin", codex}, code: 0,
			want: []string{"took out 2 older toolgate hook(s)", "Codex trusts the 2 toolgate hook(s)"}},
		{note: "Claude Code's hooks switched off", env: env, args: []string{"doctor", "claude-code"}, code: 1,
			setup: func() {
				path := filepath.Join(home, ".claude", "settings.json")
				data, _ := os.ReadFile(path)
				writeFile(t, path, strings.Replace(string(data), "{", `{"disableAllHooks": true,`, 1))
			},
			want: []string{"disableAllHooks: true"}},
		{note: "the server down", env: trusted, args: []string{"doctor", "codex", "gemini", "--codex-bin", codex}, code: 1,
			setup: func() { s.Stop() },
			want:  []string{"FAIL  toolgate at " + s.URL, "FAIL  codex: the hook, run as the agent runs it, does not answer", "FAIL  gemini: the hook"}},
	}
	for _, c := range cases {
		if c.setup != nil {
			c.setup()
		}
		r := run(c.env, c.args...)
		if r.code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", c.note, r.code, c.code, r.stdout, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s: the output lacks %q:\n%s%s", c.note, w, r.stdout, r.stderr)
			}
		}
	}
	if out := s.Output(); strings.Contains(out, agentToken) {
		t.Errorf("the server logged the agent token")
	}
}
