package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// agentPolicy is the policy of the real-agent tests: touch runs, rm is
// denied, any other shell command and every write asks a person.
const agentPolicy = `permissions:
  enabled: true
  schema: tiered_policy
  permission_mode: normal
  defaults: {"*": ask}
  tools:
    read_file: allow
    glob: allow
    grep: allow
    list_dir: allow
    bash: ask
    write_file: ask
    edit_file: ask
  rules:
    - {id: touch_ok, tools: [bash], pattern: "touch *", action: allow}
    - {id: no_rm, tools: [bash], pattern: 're:^rm ', action: deny}
  external_directory:
    "*": ask
`

// agentHookWait is the wait the tests' hooks give an ask: long enough for
// the test to answer it, short enough that an unanswered ask ends soon.
const agentHookWait = "6"

// agentScenario is one tool call the model stand-in asks for, what a
// person answers if toolgate asks, and what must then be true on disk.
type agentScenario struct {
	note       string
	tool       string
	args       func(home, ws string) map[string]any
	answer     string // "" (no one answers), allow_once or deny
	serverDown bool
	// control: run once without toolgate too, where the check must fail.
	control bool
	// allowed: the call is meant to run (toolgate allows it, or a person).
	allowed bool
	// check returns what is wrong on disk after the run, or "".
	check func(home, ws string) string
}

// exists and missing are disk checks.
func exists(path string) string {
	if _, err := os.Stat(path); err != nil {
		return path + " does not exist: the call did not run"
	}
	return ""
}

func missing(path string) string {
	if _, err := os.Stat(path); err == nil {
		return path + " exists: the call ran"
	}
	return ""
}

func unchanged(path, want string) string {
	got, err := os.ReadFile(path)
	if err != nil {
		return path + ": " + err.Error()
	}
	if string(got) != want {
		return path + " changed to " + strings.TrimSpace(string(got))
	}
	return ""
}

// claudeScenarios are the calls every wiring and mode is tried with.
var claudeScenarios = []agentScenario{
	{note: "an allowed call runs", allowed: true, tool: "Bash",
		args:  func(home, ws string) map[string]any { return map[string]any{"command": "touch allowed.txt"} },
		check: func(home, ws string) string { return exists(filepath.Join(ws, "allowed.txt")) }},
	{note: "a denied call does not run", tool: "Bash", control: true,
		args: func(home, ws string) map[string]any {
			return map[string]any{"command": "rm -r " + filepath.Join(home, "important")}
		},
		check: func(home, ws string) string { return exists(filepath.Join(home, "important", "canary.txt")) }},
	{note: "an ask answered allow runs", allowed: true, tool: "Bash", answer: "allow_once",
		args:  func(home, ws string) map[string]any { return map[string]any{"command": "echo yes > asked.txt"} },
		check: func(home, ws string) string { return exists(filepath.Join(ws, "asked.txt")) }},
	{note: "an ask answered deny does not run", tool: "Bash", answer: "deny", control: true,
		args:  func(home, ws string) map[string]any { return map[string]any{"command": "echo evil >> ~/.bashrc"} },
		check: func(home, ws string) string { return unchanged(filepath.Join(home, ".bashrc"), "# rc\n") }},
	{note: "an unanswered ask does not run", tool: "Write",
		args: func(home, ws string) map[string]any {
			return map[string]any{"file_path": filepath.Join(home, ".bash_profile"), "content": "evil\n"}
		},
		check: func(home, ws string) string { return missing(filepath.Join(home, ".bash_profile")) }},
	{note: "its own settings are not written without a person", tool: "Write", control: true,
		args: func(home, ws string) map[string]any {
			return map[string]any{"file_path": filepath.Join(ws, ".claude", "settings.json"), "content": "{}\n"}
		},
		check: func(home, ws string) string {
			return unchanged(filepath.Join(ws, ".claude", "settings.json"), "{\"model\": \"sonnet\"}\n")
		}},
	{note: "toolgate down blocks the call", tool: "Bash", serverDown: true,
		args:  func(home, ws string) map[string]any { return map[string]any{"command": "touch down.txt"} },
		check: func(home, ws string) string { return missing(filepath.Join(ws, "down.txt")) }},
}

// TestClaudeCodeRunsOnlyWhatToolgateAllows runs the real Claude Code
// (2.1.328, its native binary) headless against a stand-in for the model
// API that asks for one tool call per run, wired by `toolgate setup
// claude-code` (the http hook and the command hook), in bypassPermissions
// mode (every scenario) and default mode (a few), and checks on disk what
// Claude Code actually did with toolgate's answer.
func TestClaudeCodeRunsOnlyWhatToolgateAllows(t *testing.T) {
	claude := agentBinary(t, "claude-code")
	full := os.Getenv("TOOLGATE_AGENTS_FULL") != ""
	type run struct {
		wiring, mode string
		sc           agentScenario
	}
	var runs []run
	// The controls: without toolgate's hooks the same calls do destroy the
	// canaries, so the checks below can fail.
	for _, sc := range claudeScenarios {
		if sc.control {
			runs = append(runs, run{"none", "bypassPermissions", sc})
		}
	}
	for _, wiring := range []string{"http", "command"} {
		for _, sc := range claudeScenarios {
			runs = append(runs, run{wiring, "bypassPermissions", sc})
			if full || sc.answer != "" || sc.serverDown {
				runs = append(runs, run{wiring, "default", sc})
			}
		}
	}
	var mu sync.Mutex
	latencies := map[string][]time.Duration{}
	sem := make(chan struct{}, 3)
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			problem, took := runClaudeScenario(t, claude, r.wiring, r.mode, r.sc)
			mu.Lock()
			defer mu.Unlock()
			if r.wiring == "none" {
				if !strings.Contains(problem, "the call ran") && !strings.Contains(problem, "changed to") && !strings.Contains(problem, "does not exist") {
					t.Errorf("control without toolgate, %s: the call did not do its harm (%q), so this check proves nothing", r.sc.note, problem)
				}
				return
			}
			if problem != "" {
				t.Errorf("%s hook, %s mode, %s: %s", r.wiring, r.mode, r.sc.note, problem)
			}
			if took > 0 {
				latencies[r.wiring] = append(latencies[r.wiring], took)
			}
		}()
	}
	wg.Wait()
	for wiring, l := range latencies {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
		t.Logf("%s hook: %d allowed calls, agent run median %v, max %v", wiring, len(l), l[len(l)/2], l[len(l)-1])
	}
}

// runClaudeScenario runs one scenario in a fresh home, workspace and
// server; it returns what went wrong ("" when nothing) and, for a call
// that toolgate allowed at once, how long the whole agent run took.
func runClaudeScenario(t *testing.T, claude, wiring, mode string, sc agentScenario) (string, time.Duration) {
	s := StartServer(t, ServerOptions{ConfigYAML: agentPolicy})
	defer s.Stop()
	agent := createToken(t, s, "claude", "agent")
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	writeFile(t, filepath.Join(home, "important", "canary.txt"), "keep me\n")
	writeFile(t, filepath.Join(home, ".bashrc"), "# rc\n")
	writeFile(t, filepath.Join(ws, ".claude", "settings.json"), "{\"model\": \"sonnet\"}\n")
	env := []string{"HOME=" + home, "USER=tester", "TOOLGATE_URL=" + s.URL, "TOOLGATE_TOKEN=" + agent}
	args := []string{"setup", "claude-code", "--wait", agentHookWait, "--workspace", ws}
	if wiring == "command" {
		args = append(args, "--command")
	}
	if wiring != "none" {
		if r := runCLIEnv(t, ws, env, args...); r.code != 0 {
			return "toolgate setup: " + r.stderr, 0
		}
	}
	stub := newAnthropicStub(t, sc.tool, sc.args(home, ws))
	if sc.serverDown {
		s.Stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "do the task", "--permission-mode", mode, "--output-format", "json")
	cmd.Dir = ws
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + stub.srv.URL,
		"ANTHROPIC_API_KEY=sk-ant-stub", "IS_SANDBOX=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err.Error(), 0
	}
	done := make(chan struct{})
	if sc.answer != "" {
		go answerFirstAsk(s, sc.answer, done)
	}
	err := cmd.Wait()
	close(done)
	took := time.Since(start)
	if problem := sc.check(home, ws); problem != "" {
		return problem + "\nclaude: " + tail(out.String()) + tail(errb.String()) + "\ntool results: " + strings.Join(stub.toolResults(), " | "), 0
	}
	if ctx.Err() != nil {
		return "claude did not finish: " + tail(errb.String()), 0
	}
	if len(stub.toolResults()) == 0 {
		return "claude never asked for the tool call (exit " + errString(err) + "): " + tail(out.String()) + tail(errb.String()), 0
	}
	if joined := strings.Join(stub.toolResults(), " | "); wiring != "none" && !sc.allowed && !blockedByToolgate(joined) {
		return "the call was blocked, but not with toolgate's reason: " + joined, 0
	}
	if os.Getenv("TOOLGATE_AGENTS_VERBOSE") != "" {
		t.Logf("%s %s %s: %s", wiring, mode, sc.note, strings.Join(stub.toolResults(), " | "))
	}
	if sc.answer == "" && !sc.serverDown && strings.Contains(sc.note, "allowed call") {
		return "", took
	}
	return "", 0
}

// answerFirstAsk waits for the run's ask and answers it as a person
// would, until done is closed.
func answerFirstAsk(s *Server, choice string, done <-chan struct{}) {
	client := &http.Client{Timeout: 2 * time.Second}
	call := func(method, path string, body []byte) (int, []byte) {
		req, _ := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+s.Token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	for {
		select {
		case <-done:
			return
		case <-time.After(100 * time.Millisecond):
		}
		var page struct {
			Approvals []wsApproval `json:"approvals"`
		}
		st, body := call("GET", "/api/v1/approvals?status=pending", nil)
		if st == 200 && json.Unmarshal(body, &page) == nil && len(page.Approvals) > 0 {
			call("POST", "/api/v1/approvals/"+page.Approvals[0].ID+"/decision", []byte(`{"choice":"`+choice+`","comment":"the test"}`))
			return
		}
	}
}

func tail(s string) string {
	if len(s) > 600 {
		return "..." + s[len(s)-600:]
	}
	return s
}

func errString(err error) string {
	if err == nil {
		return "0"
	}
	return err.Error()
}

// TestHookLatencyPerWiring measures what toolgate adds to an allowed tool
// call in each wiring, as the agent waits for it: the http hook (one
// POST, as Claude Code sends it) and the command hook (the toolgate
// process started per call, as every agent runs it). It logs the median
// and p99; figures, not assertions (BENCHMARKS.md).
func TestHookLatencyPerWiring(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: agentPolicy})
	agent := createToken(t, s, "claude", "agent")
	ws := t.TempDir()
	event := []byte(`{"session_id":"lat","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"touch x"}}`)
	measure := func(n int, call func() error) []time.Duration {
		var d []time.Duration
		for i := 0; i < n; i++ {
			start := time.Now()
			if err := call(); err != nil {
				t.Fatal(err)
			}
			d = append(d, time.Since(start))
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d
	}
	client := &http.Client{}
	httpHook := measure(300, func() error {
		req, _ := http.NewRequest("POST", s.URL+"/api/v1/hooks/claude-code?on_error=deny&wait_seconds=6&workspace="+ws, bytes.NewReader(event))
		req.Header.Set("Authorization", "Bearer "+agent)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil
	})
	bin := toolgateCLI(t)
	commandHook := measure(60, func() error {
		cmd := exec.Command(bin, "hook", "claude-code", "--url", s.URL, "--wait", "6", "--workspace", ws)
		cmd.Env = []string{"TOOLGATE_TOKEN=" + agent, "HOME=" + ws}
		cmd.Stdin = bytes.NewReader(event)
		out, err := cmd.Output()
		if err != nil || strings.Contains(string(out), "deny") {
			return fmt.Errorf("hook: %v %s", err, out)
		}
		return nil
	})
	for _, m := range []struct {
		wiring string
		d      []time.Duration
	}{{"http", httpHook}, {"command", commandHook}} {
		t.Logf("%s hook, allowed call: median %v, p99 %v over %d calls", m.wiring, m.d[len(m.d)/2], m.d[len(m.d)*99/100], len(m.d))
	}
}

// blockedByToolgate tells a tool result that toolgate's hook refused: its
// reason, or Claude Code's word that the hook's failure blocked the call.
func blockedByToolgate(result string) bool {
	return strings.Contains(result, "toolgate") || strings.Contains(result, `blocking because onFailure is \"block\"`)
}
