package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// cliBinary is the toolgate command (cmd/toolgate), built once on first use.
var (
	cliOnce   sync.Once
	cliBinary string
	cliErr    error
)

// toolgateCLI builds cmd/toolgate the first time, next to the server
// binary, whose directory TestMain removes at the end.
func toolgateCLI(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		cliBinary = filepath.Join(filepath.Dir(binary), "toolgate-cli")
		out, err := exec.Command("go", "build", "-o", cliBinary, "../cmd/toolgate").CombinedOutput()
		if err != nil {
			cliErr = err
			cliBinary = string(out)
		}
	})
	if cliErr != nil {
		t.Fatalf("build cmd/toolgate: %v\n%s", cliErr, cliBinary)
	}
	return cliBinary
}

// cliResult is one run of the command.
type cliResult struct {
	code   int
	stdout string
	stderr string
}

// runCLI runs the toolgate command with args, stdin and the environment's
// TOOLGATE_URL and TOOLGATE_TOKEN set to url and token, in dir.
func runCLI(t *testing.T, dir, url, token, stdin string, args ...string) cliResult {
	t.Helper()
	r, err := startCLI(toolgateCLI(t), dir, url, token, stdin, args...)
	if err != nil {
		t.Fatalf("toolgate %v: %v", args, err)
	}
	return r
}

// startCLI runs the command; it does not touch the test, so a goroutine
// may call it (build the binary with toolgateCLI first).
func startCLI(bin, dir, url, token, stdin string, args ...string) (cliResult, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TOOLGATE_URL="+url, "TOOLGATE_TOKEN="+token)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return cliResult{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return cliResult{}, errors.New("did not finish within 60 s")
	}
	return cliResult{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}, nil
}

// payloadText is a documentation payload as the agent writes it on stdin.
func payloadText(t *testing.T, name string, set map[string]any) string {
	t.Helper()
	data, err := json.Marshal(hookPayload(t, name, set))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestToolgateHookCommand runs `toolgate hook <agent>` as the agents do:
// the event on stdin, the answer on stdout with exit 0; and fails closed
// (exit 2, the reason on stderr) on a bad token, a malformed event, and a
// stopped server.
func TestToolgateHookCommand(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: hooksConfig, BuiltinYAML: "rules: []\n"})
	agent := createToken(t, s, "laptop", "agent")
	dir := t.TempDir()
	cases := []struct {
		note  string
		agent string
		file  string
		set   map[string]any
		args  []string
		want  string
	}{
		{note: "claude PreToolUse allow", agent: "claude-code", file: "claude-code/pretooluse-bash.json", want: "allow"},
		{note: "claude PreToolUse deny", agent: "claude-code", file: "claude-code/pretooluse-write.json", want: "deny"},
		{note: "claude PermissionRequest deny by rule", agent: "claude-code", file: "claude-code/permissionrequest-bash.json", want: "deny"},
		{note: "claude PermissionRequest unanswered ask, --wait 0", agent: "claude-code", file: "claude-code/permissionrequest-bash.json",
			set: map[string]any{"tool_input": map[string]any{"command": "make"}}, args: []string{"--wait", "0"}, want: "deny"},
		{note: "codex PreToolUse ask, --hook-ask agent: no decision", agent: "codex", file: "codex/pretooluse-bash.json",
			args: []string{"--hook-ask", "agent"}, want: "none"},
		{note: "codex apply_patch into /etc", agent: "codex", file: "codex/pretooluse-apply-patch.json", want: "deny"},
		{note: "codex PreToolUse ask: an unanswered ask is a deny", agent: "codex", file: "codex/pretooluse-bash.json",
			args: []string{"--wait", "0"}, want: "deny"},
		{note: "gemini read_file", agent: "gemini", file: "gemini/beforetool-read-file.json", want: "none"},
		{note: "gemini write_file", agent: "gemini", file: "gemini/beforetool-write-file.json", want: "deny"},
	}
	for _, c := range cases {
		r := runCLI(t, dir, s.URL, agent, payloadText(t, c.file, c.set), append([]string{"hook", c.agent}, c.args...)...)
		if r.code != 0 {
			t.Errorf("%s: exit %d, stderr %s", c.note, r.code, r.stderr)
			continue
		}
		if got := DecodeJSON[hookAnswer](t, []byte(r.stdout)).summary(); got != c.want {
			t.Errorf("%s: printed %s, want %s", c.note, r.stdout, c.want)
		}
	}

	bash := payloadText(t, "claude-code/pretooluse-bash.json", nil)
	failures := []struct {
		note, url, token, stdin, stderr string
	}{
		{note: "a revoked or wrong token", url: s.URL, token: "tg_not_a_token", stdin: bash, stderr: "401"},
		{note: "no token", url: s.URL, token: "", stdin: bash, stderr: "no API token"},
		{note: "a malformed event", url: s.URL, token: agent, stdin: `{"tool_name": 7}`, stderr: "400"},
		{note: "an empty event", url: s.URL, token: agent, stdin: "", stderr: "400"},
		{note: "not an http URL", url: "ftp://example", token: agent, stdin: bash, stderr: "not an http(s) URL"},
	}
	for _, f := range failures {
		r := runCLI(t, dir, f.url, f.token, f.stdin, "hook", "claude-code")
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, f.stderr) {
			t.Errorf("%s: exit %d stdout %q stderr %q, want exit 2, nothing on stdout, stderr naming %q", f.note, r.code, r.stdout, r.stderr, f.stderr)
		}
	}

	s.Stop()
	for _, a := range []string{"claude-code", "codex", "gemini"} {
		r := runCLI(t, dir, s.URL, agent, bash, "hook", a)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "cannot reach toolgate") || !strings.Contains(r.stderr, "blocked") {
			t.Errorf("server stopped, %s: exit %d stdout %q stderr %q, want exit 2 with the reason", a, r.code, r.stdout, r.stderr)
		}
	}
}

// TestToolgatePrintConfig checks that each snippet is JSON for the
// server's URL and carries no token.
func TestToolgatePrintConfig(t *testing.T) {
	dir := t.TempDir()
	const url = "http://127.0.0.1:9"
	cases := []struct {
		note string
		args []string
		want []string
	}{
		{note: "claude http", args: []string{"hook", "claude-code", "--print-config"},
			want: []string{`"type": "http"`, url + "/api/v1/hooks/claude-code?on_error=deny", "wait_seconds=120", `"Bearer $TOOLGATE_TOKEN"`, `"PermissionRequest"`, `"PreToolUse"`}},
		{note: "claude command", args: []string{"hook", "claude-code", "--print-config", "--command", "--wait", "60"},
			want: []string{`"type": "command"`, "toolgate hook claude-code --url " + url, "--wait 60", `"timeout": 75`}},
		{note: "codex", args: []string{"hook", "codex", "--print-config", "--bin", "/opt/tg/toolgate"},
			want: []string{"/opt/tg/toolgate hook codex --url " + url, `"PermissionRequest"`}},
		{note: "gemini", args: []string{"hook", "gemini", "--print-config"},
			want: []string{`"BeforeTool"`, "toolgate hook gemini --url " + url + " --wait 120", `"timeout": 135000`}},
	}
	for _, c := range cases {
		r := runCLI(t, dir, url, "secret-token-value", "", c.args...)
		if r.code != 0 {
			t.Errorf("%s: exit %d %s", c.note, r.code, r.stderr)
			continue
		}
		if !json.Valid([]byte(r.stdout)) {
			t.Errorf("%s: not JSON: %s", c.note, r.stdout)
		}
		for _, w := range c.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s: snippet lacks %q:\n%s", c.note, w, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "secret-token-value") {
			t.Errorf("%s: the snippet holds the token", c.note)
		}
	}
}

// TestToolgatePermissionsAddDirEvaluate runs the spec's commands through
// the command and checks their text, the policy they write, and the
// decisions evaluate prints.
func TestToolgatePermissionsAddDirEvaluate(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: hooksConfig, BuiltinYAML: "rules: []\n"})
	dir := t.TempDir()
	run := func(stdin string, args ...string) cliResult { return runCLI(t, dir, s.URL, s.Token, stdin, args...) }

	r := run("", "permissions")
	if r.code != 0 || !strings.Contains(r.stdout, "── Tool Permissions ──") || !strings.Contains(r.stdout, "── Rules ──") ||
		!strings.Contains(r.stdout, "[npm_test_ok]") {
		t.Errorf("permissions: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = run("", "permissions", "allow", "bash(ls *)"); r.code != 0 {
		t.Errorf("permissions allow bash(ls *): exit %d %s", r.code, r.stderr)
	}
	if r = run("", "permissions", "deny", "GLOB"); r.code != 0 || !strings.Contains(r.stdout, "glob") {
		t.Errorf("permissions deny GLOB: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = run("", "permissions", "maybe", "bash")
	if r.code != 1 || !strings.Contains(r.stderr, `无效级别 "maybe"，仅允许：allow、ask、deny`) {
		t.Errorf("permissions maybe bash: exit %d stderr %q, want the spec's message", r.code, r.stderr)
	}
	if cfg := s.ReadFile("config.yaml"); !strings.Contains(cfg, "cli_rule_bash_ls_*") || !strings.Contains(cfg, "glob: deny") {
		t.Errorf("config.yaml after the commands:\n%s", cfg)
	}

	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if r = run("", "add-dir", "shared"); r.code != 0 || strings.Contains(r.stderr, "warning") {
		t.Errorf("add-dir shared: exit %d %s", r.code, r.stderr)
	}
	if r = run("", "add-dir", "no-such-dir"); r.code != 0 || !strings.Contains(r.stderr, "does not exist on this machine") {
		t.Errorf("add-dir of a missing directory: exit %d %q, want it added with a warning", r.code, r.stderr)
	}
	if cfg := s.ReadFile("config.yaml"); !strings.Contains(cfg, filepath.ToSlash(shared)) {
		t.Errorf("add-dir did not write %s (made absolute from the command's directory):\n%s", shared, cfg)
	}
	if r = run("", "add-dir"); r.code != 1 || !strings.Contains(r.stderr, "路径不能为空") {
		t.Errorf("add-dir without a path: exit %d %q", r.code, r.stderr)
	}

	evals := []struct {
		note  string
		stdin string
		args  []string
		want  string
		rule  string
	}{
		{note: "flags: ls by the new rule", args: []string{"--tool", "bash", "--arg", "command=ls -la"}, want: "allow\n", rule: "[cli_rule_bash_ls_*]"},
		{note: "flags: rm -rf", args: []string{"--tool", "bash", "--arg", "command=rm -rf /"}, want: "deny\n", rule: "[no_rm_rf]"},
		{note: "flags: the directory add-dir trusted", args: []string{"--tool", "read_file", "--arg", "path=" + filepath.Join(shared, "a.txt"), "--workspace", s.Workspace}, want: "allow\n"},
		{note: "stdin", stdin: `{"tool_name":"write_file","tool_args":{"path":"x"}}`, want: "deny\n"},
	}
	for _, e := range evals {
		r = run(e.stdin, append([]string{"evaluate"}, e.args...)...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, e.want) || !strings.Contains(r.stdout, "\nrule: ") ||
			!strings.Contains(r.stdout, e.rule) || !strings.Contains(r.stdout, "\nreason: ") {
			t.Errorf("evaluate %s: exit %d stdout %q stderr %q, want it to start with %q and name %q", e.note, r.code, r.stdout, r.stderr, e.want, e.rule)
		}
	}
	r = run(`{"tool_name":"bash","tool_args":{"command":"ls"},"extra":1}`, "evaluate")
	if r.code != 1 || !strings.Contains(r.stderr, "extra") {
		t.Errorf("evaluate with an unknown member: exit %d stderr %q, want the server's 400 naming it", r.code, r.stderr)
	}
	r = run("", "evaluate", "--json", "--tool", "bash", "--arg", "command=npm test")
	if r.code != 0 || !json.Valid([]byte(r.stdout)) || !strings.Contains(r.stdout, `"level":"allow"`) {
		t.Errorf("evaluate --json: exit %d %q", r.code, r.stdout)
	}
}

// TestDocumentedHookSnippets keeps the snippets of docs/agents.md equal
// (as JSON) to what `toolgate hook <agent> --print-config` prints for the
// default server, so a person pasting either gets the hooks setup writes.
func TestDocumentedHookSnippets(t *testing.T) {
	data, err := os.ReadFile("../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "\n### The snippets\n")
	if !ok {
		t.Fatal("docs/agents.md has no \"The snippets\" section")
	}
	rest, _, _ = strings.Cut(rest, "\n## ")
	var blocks []string
	for {
		_, after, ok := strings.Cut(rest, "```json\n")
		if !ok {
			break
		}
		block, tail, _ := strings.Cut(after, "```")
		blocks = append(blocks, block)
		rest = tail
	}
	if len(blocks) != 4 {
		t.Fatalf("found %d json snippets, want 4 (Claude Code http and command, Codex, Gemini CLI)", len(blocks))
	}
	claude, codex, gemini := blocks[:2], blocks[2:3], blocks[3:]
	cases := []struct {
		note    string
		snippet string
		args    []string
	}{
		{note: "Claude Code http hook", snippet: claude[0], args: []string{"hook", "claude-code", "--print-config"}},
		{note: "Claude Code command hook", snippet: claude[1], args: []string{"hook", "claude-code", "--print-config", "--command"}},
		{note: "Codex", snippet: codex[0], args: []string{"hook", "codex", "--print-config"}},
		{note: "Gemini CLI", snippet: gemini[0], args: []string{"hook", "gemini", "--print-config"}},
	}
	for _, c := range cases {
		r := runCLI(t, t.TempDir(), "http://127.0.0.1:8765", "", "", c.args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d %s", c.note, r.code, r.stderr)
		}
		var readme, printed any
		if err := json.Unmarshal([]byte(c.snippet), &readme); err != nil {
			t.Errorf("%s: the documented snippet is not JSON: %v", c.note, err)
			continue
		}
		if err := json.Unmarshal([]byte(r.stdout), &printed); err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(readme)
		b, _ := json.Marshal(printed)
		if string(a) != string(b) {
			t.Errorf("%s: docs/agents.md shows\n%s\nbut --print-config prints\n%s", c.note, a, b)
		}
	}
}
