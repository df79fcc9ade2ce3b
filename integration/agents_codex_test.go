package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// codexProvider points Codex at the stand-in model API.
const codexProvider = `model = "stub-model"
model_provider = "stub"

[model_providers.stub]
name = "stub"
base_url = "%s/v1"
wire_api = "responses"
env_key = "STUB_API_KEY"
request_max_retries = 0
stream_max_retries = 0
`

func shellCmd(cmd string) func(home, ws string) map[string]any {
	return func(home, ws string) map[string]any { return map[string]any{"cmd": cmd} }
}

// codexScenarios are Codex's calls, all through exec_command, its shell
// tool (Codex 0.169 reports it to hooks as Bash).
var codexScenarios = []agentScenario{
	{note: "an allowed call runs", allowed: true, tool: "exec_command", args: shellCmd("touch allowed.txt"),
		check: func(home, ws string) string { return exists(filepath.Join(ws, "allowed.txt")) }},
	{note: "a denied call does not run", tool: "exec_command", control: true,
		args: func(home, ws string) map[string]any {
			return map[string]any{"cmd": "rm -r " + filepath.Join(home, "important")}
		},
		check: func(home, ws string) string { return exists(filepath.Join(home, "important", "canary.txt")) }},
	{note: "an ask answered allow runs", allowed: true, tool: "exec_command", answer: "allow_once", args: shellCmd("echo yes > asked.txt"),
		check: func(home, ws string) string { return exists(filepath.Join(ws, "asked.txt")) }},
	{note: "an ask answered deny does not run", tool: "exec_command", answer: "deny", control: true, args: shellCmd("echo evil >> ~/.bashrc"),
		check: func(home, ws string) string { return unchanged(filepath.Join(home, ".bashrc"), "# rc\n") }},
	{note: "an unanswered ask does not run", tool: "exec_command", args: shellCmd("echo evil > ~/.bash_profile"),
		check: func(home, ws string) string { return missing(filepath.Join(home, ".bash_profile")) }},
	{note: "its own settings are not written without a person", tool: "exec_command", control: true,
		args: shellCmd(`echo 'approval_policy = "never"' > .codex/config.toml`),
		check: func(home, ws string) string {
			return unchanged(filepath.Join(ws, ".codex", "config.toml"), "# project\n")
		}},
	{note: "a model-chosen workdir does not move the workspace", tool: "exec_command", control: true,
		args:  func(home, ws string) map[string]any { return map[string]any{"cmd": "touch moved.txt", "workdir": home} },
		check: func(home, ws string) string { return missing(filepath.Join(home, "moved.txt")) }},
	{note: "toolgate down blocks the call", tool: "exec_command", serverDown: true, args: shellCmd("touch down.txt"),
		check: func(home, ws string) string { return missing(filepath.Join(ws, "down.txt")) }},
}

// TestCodexRunsOnlyWhatToolgateAllows runs the real Codex (0.169.0,
// `codex exec`) against a stand-in for the Responses API that asks for one
// exec_command call per run, wired and trusted by `toolgate setup codex`,
// with --dangerously-bypass-approvals-and-sandbox (every scenario) and in
// its workspace-write sandbox (a few; its read-only default would refuse
// the writes itself), and checks on disk what Codex did.
func TestCodexRunsOnlyWhatToolgateAllows(t *testing.T) {
	codex := agentBinary(t, "codex")
	full := os.Getenv("TOOLGATE_AGENTS_FULL") != ""
	type run struct {
		wiring, mode string
		sc           agentScenario
	}
	var runs []run
	for _, sc := range codexScenarios {
		if sc.control {
			runs = append(runs, run{"none", "bypass", sc})
		}
		runs = append(runs, run{"command", "bypass", sc})
		if full || sc.answer == "allow_once" || sc.serverDown {
			runs = append(runs, run{"command", "workspace-write", sc})
		}
	}
	var mu sync.Mutex
	sem := make(chan struct{}, 3)
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			problem := runCodexScenario(t, codex, r.wiring, r.mode, r.sc)
			mu.Lock()
			defer mu.Unlock()
			if r.wiring == "none" {
				if !strings.Contains(problem, "the call ran") && !strings.Contains(problem, "changed to") && !strings.Contains(problem, "does not exist") {
					t.Errorf("control without toolgate, %s: the call did not do its harm (%q), so this check proves nothing", r.sc.note, problem)
				}
				return
			}
			if problem != "" {
				t.Errorf("%s mode, %s: %s", r.mode, r.sc.note, problem)
			}
		}()
	}
	wg.Wait()
}

// runCodexScenario runs one scenario in a fresh home, workspace and server
// and returns what went wrong, or "".
func runCodexScenario(t *testing.T, codex, wiring, mode string, sc agentScenario) string {
	s := StartServer(t, ServerOptions{ConfigYAML: agentPolicy})
	defer s.Stop()
	agent := createToken(t, s, "codex", "agent")
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	stub := newResponsesStub(t, sc.tool, sc.args(home, ws))
	writeFile(t, filepath.Join(home, "important", "canary.txt"), "keep me\n")
	writeFile(t, filepath.Join(home, ".bashrc"), "# rc\n")
	writeFile(t, filepath.Join(ws, ".codex", "config.toml"), "# project\n")
	writeFile(t, filepath.Join(home, ".codex", "config.toml"), strings.Replace(codexProvider, "%s", stub.srv.URL, 1))
	env := []string{"HOME=" + home, "USER=tester", "TOOLGATE_URL=" + s.URL, "TOOLGATE_TOKEN=" + agent, "STUB_API_KEY=stub"}
	if wiring != "none" {
		r := runCLIEnv(t, ws, env, "setup", "codex", "--wait", agentHookWait, "--workspace", ws, "--codex-bin", codex)
		if r.code != 0 {
			return "toolgate setup: " + r.stdout + r.stderr
		}
	}
	if sc.serverDown {
		s.Stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{"exec", "--skip-git-repo-check"}
	if mode == "bypass" {
		args = append(args, "--dangerously-bypass-approvals-and-sandbox")
	} else {
		args = append(args, "--sandbox", "workspace-write")
	}
	cmd := exec.CommandContext(ctx, codex, append(args, "do the task")...)
	cmd.Dir = ws
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return err.Error()
	}
	done := make(chan struct{})
	if sc.answer != "" {
		go answerFirstAsk(s, sc.answer, done)
	}
	err := cmd.Wait()
	close(done)
	if problem := sc.check(home, ws); problem != "" {
		return problem + "\ncodex: " + tail(out.String()) + tail(errb.String()) + "\ntool results: " + strings.Join(stub.toolResults(), " | ")
	}
	if ctx.Err() != nil {
		return "codex did not finish: " + tail(errb.String())
	}
	if len(stub.toolResults()) == 0 {
		return "codex never asked for the tool call (exit " + errString(err) + "): " + tail(out.String()) + tail(errb.String())
	}
	if joined := strings.Join(stub.toolResults(), " | "); wiring != "none" && !sc.allowed && !blockedByToolgate(joined) {
		return "the call was blocked, but not with toolgate's reason: " + joined
	}
	// The tool call's turn, seen from the model's side: the hook's answer
	// plus Codex's own work (and, for an ask, the person's or the wait).
	t.Logf("codex %s %s, %s: tool call to its result %v", wiring, mode, sc.note, stub.turnTime().Round(time.Millisecond))
	if os.Getenv("TOOLGATE_AGENTS_VERBOSE") != "" {
		t.Logf("codex %s %s: %s", mode, sc.note, strings.Join(stub.toolResults(), " | "))
	}
	return ""
}
