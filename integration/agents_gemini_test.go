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

func geminiShell(cmd string) func(home, ws string) map[string]any {
	return func(home, ws string) map[string]any { return map[string]any{"command": cmd} }
}

// geminiScenarios are Gemini CLI's calls: run_shell_command and write_file.
var geminiScenarios = []agentScenario{
	{note: "an allowed call runs", allowed: true, tool: "run_shell_command", args: geminiShell("touch allowed.txt"),
		check: func(home, ws string) string { return exists(filepath.Join(ws, "allowed.txt")) }},
	{note: "a denied call does not run", tool: "run_shell_command", control: true,
		args: func(home, ws string) map[string]any {
			return map[string]any{"command": "rm -r " + filepath.Join(home, "important")}
		},
		check: func(home, ws string) string { return exists(filepath.Join(home, "important", "canary.txt")) }},
	{note: "an ask answered allow runs", allowed: true, tool: "run_shell_command", answer: "allow_once", args: geminiShell("echo yes > asked.txt"),
		check: func(home, ws string) string { return exists(filepath.Join(ws, "asked.txt")) }},
	{note: "an ask answered deny does not run", tool: "run_shell_command", answer: "deny", control: true, args: geminiShell("echo evil >> ~/.bashrc"),
		check: func(home, ws string) string { return unchanged(filepath.Join(home, ".bashrc"), "# rc\n") }},
	{note: "an unanswered ask does not run", tool: "write_file",
		args: func(home, ws string) map[string]any {
			return map[string]any{"file_path": filepath.Join(ws, "notes.txt"), "content": "x\n"}
		},
		check: func(home, ws string) string { return missing(filepath.Join(ws, "notes.txt")) }},
	{note: "its own settings are not written without a person", tool: "write_file", control: true,
		args: func(home, ws string) map[string]any {
			return map[string]any{"file_path": filepath.Join(ws, ".gemini", "settings.json"), "content": "{\"hooksConfig\": {\"enabled\": false}}\n"}
		},
		check: func(home, ws string) string { return unchanged(filepath.Join(ws, ".gemini", "settings.json"), "{}\n") }},
	{note: "toolgate down blocks the call", tool: "run_shell_command", serverDown: true, args: geminiShell("touch down.txt"),
		check: func(home, ws string) string { return missing(filepath.Join(ws, "down.txt")) }},
}

// TestGeminiRunsOnlyWhatToolgateAllows runs the real Gemini CLI (0.61.0,
// `gemini -p`, under Node.js) against a stand-in for the Gemini API that
// asks for one tool call per run, wired by `toolgate setup gemini`, in a
// folder it trusts (it runs no hook in one it does not), with --yolo
// (every scenario), and checks on disk what Gemini CLI did.
func TestGeminiRunsOnlyWhatToolgateAllows(t *testing.T) {
	gemini := agentBinary(t, "gemini")
	type run struct {
		wiring string
		sc     agentScenario
	}
	var runs []run
	for _, sc := range geminiScenarios {
		if sc.control {
			runs = append(runs, run{"none", sc})
		}
		runs = append(runs, run{"command", sc})
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
			problem := runGeminiScenario(t, gemini, r.wiring, r.sc)
			mu.Lock()
			defer mu.Unlock()
			if r.wiring == "none" {
				if !strings.Contains(problem, "the call ran") && !strings.Contains(problem, "changed to") && !strings.Contains(problem, "does not exist") {
					t.Errorf("control without toolgate, %s: the call did not do its harm (%q), so this check proves nothing", r.sc.note, problem)
				}
				return
			}
			if problem != "" {
				t.Errorf("yolo, %s: %s", r.sc.note, problem)
			}
		}()
	}
	wg.Wait()
}

// runGeminiScenario runs one scenario in a fresh home, workspace and
// server and returns what went wrong, or "".
func runGeminiScenario(t *testing.T, gemini, wiring string, sc agentScenario) string {
	s := StartServer(t, ServerOptions{ConfigYAML: agentPolicy})
	defer s.Stop()
	agent := createToken(t, s, "gemini", "agent")
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	stub := newGeminiStub(t, sc.tool, sc.args(home, ws))
	writeFile(t, filepath.Join(home, "important", "canary.txt"), "keep me\n")
	writeFile(t, filepath.Join(home, ".bashrc"), "# rc\n")
	writeFile(t, filepath.Join(ws, ".gemini", "settings.json"), "{}\n")
	writeFile(t, filepath.Join(home, ".gemini", "settings.json"), `{"security": {"auth": {"selectedType": "gemini-api-key"}}}`)
	writeFile(t, filepath.Join(home, ".gemini", "trustedFolders.json"), `{"`+ws+`": "TRUST_FOLDER"}`)
	env := []string{"HOME=" + home, "USER=tester", "TOOLGATE_URL=" + s.URL, "TOOLGATE_TOKEN=" + agent}
	if wiring != "none" {
		r := runCLIEnv(t, ws, env, "setup", "gemini", "--wait", agentHookWait, "--workspace", ws)
		if r.code != 0 {
			return "toolgate setup: " + r.stdout + r.stderr
		}
		if r := runCLIEnv(t, ws, env, "doctor", "gemini"); r.code != 0 {
			return "toolgate doctor: " + r.stdout + r.stderr
		}
	}
	if sc.serverDown {
		s.Stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", gemini, "-p", "do the task", "--yolo", "--model", "gemini-2.5-flash")
	cmd.Dir = ws
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "GOOGLE_GEMINI_BASE_URL=" + stub.srv.URL,
		"GEMINI_API_KEY=stub", "GEMINI_CLI_NO_RELAUNCH=true"}, env...)
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
		return problem + "\ngemini: " + tail(out.String()) + tail(errb.String()) + "\ntool results: " + strings.Join(stub.toolResults(), " | ")
	}
	if ctx.Err() != nil {
		return "gemini did not finish: " + tail(errb.String())
	}
	if len(stub.toolResults()) == 0 {
		return "gemini never asked for the tool call (exit " + errString(err) + "): " + tail(out.String()) + tail(errb.String())
	}
	if joined := strings.Join(stub.toolResults(), " | "); wiring != "none" && !sc.allowed && !blockedByToolgate(joined) {
		return "the call was blocked, but not with toolgate's reason: " + joined
	}
	// The tool call's turn, seen from the model's side: the hook's answer
	// plus Gemini CLI's own work (and, for an ask, the person's or the wait).
	t.Logf("gemini %s, %s: tool call to its result %v", wiring, sc.note, stub.turnTime().Round(time.Millisecond))
	if os.Getenv("TOOLGATE_AGENTS_VERBOSE") != "" {
		t.Logf("gemini %s: %s", sc.note, strings.Join(stub.toolResults(), " | "))
	}
	return ""
}
