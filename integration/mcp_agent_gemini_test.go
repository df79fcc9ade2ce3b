package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGeminiCLICallsMCPToolsThroughToolgate runs the real Gemini CLI
// against its model stand-in with the filesystem server wired as the
// README says (mcpServers in settings.json, the token allowed through
// Gemini's redaction of variables named like secrets): an allowed read
// returns the file and a write a rule denies never reaches the server.
// --yolo keeps Gemini's own confirmations out of the way, so what is seen
// is toolgate's decision. The last run drops the allowance: Gemini then
// keeps TOOLGATE_TOKEN from the gateway, which exits before starting the
// server, so no tool is offered (the server is missing, never unguarded),
// which shows the README's allowance is needed.
func TestGeminiCLICallsMCPToolsThroughToolgate(t *testing.T) {
	gemini := agentBinary(t, "gemini")
	server := agentBinary(t, "server-filesystem")
	for _, sc := range []struct {
		note, tool string
		args       func(f mcpFiles) map[string]any
		noAllow    bool
		want       string // in the tool result
		reaches    bool   // the call is in what the server read
		check      func(f mcpFiles) string
	}{
		{note: "an allowed read returns the file", tool: "read_text_file", want: "the canary lives", reaches: true,
			args: func(f mcpFiles) map[string]any { return map[string]any{"path": f.canary} }},
		{note: "a write a rule denies never reaches the server", tool: "write_file", want: "no_mcp_writes",
			args:  func(f mcpFiles) map[string]any { return map[string]any{"path": f.canary, "content": "overwritten\n"} },
			check: func(f mcpFiles) string { return unchanged(f.canary, canaryText) }},
		{note: "without the token's allowance the gateway has no token and offers no tool", tool: "read_text_file", noAllow: true,
			args: func(f mcpFiles) map[string]any { return map[string]any{"path": f.canary} }},
	} {
		t.Run(sc.note, func(t *testing.T) {
			t.Parallel()
			s := StartServer(t, ServerOptions{ConfigYAML: mcpAgentPolicy})
			agent := createToken(t, s, "gemini-mcp", "agent")
			home := t.TempDir()
			f := newMCPFiles(t, s, home)
			upstream := []string{"bash", "-c", `exec node "$@" < <(exec tee -a "$0")`, f.upstreamLog, server, f.root}
			security := map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"},
				"environmentVariableRedaction": map[string]any{"allowed": []string{"TOOLGATE_TOKEN"}}}
			if sc.noAllow {
				delete(security, "environmentVariableRedaction")
			}
			settings := map[string]any{"security": security, "mcpServers": map[string]any{"fs": map[string]any{"command": toolgateCLI(t),
				"args": append([]string{"mcp", "--name", "fs", "--wait", "30", "--"}, upstream...)}}}
			data, _ := json.Marshal(settings)
			writeFile(t, filepath.Join(home, ".gemini", "settings.json"), string(data))
			writeFile(t, filepath.Join(home, ".gemini", "trustedFolders.json"), `{"`+s.Workspace+`": "TRUST_FOLDER"}`)
			stub := newGeminiStub(t, "mcp_fs_"+sc.tool, sc.args(f)) // Gemini names MCP tools mcp_SERVER_TOOL
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			cmd := exec.CommandContext(ctx, "node", gemini, "-p", "do the task", "--yolo", "--model", "gemini-2.5-flash")
			cmd.Dir = s.Workspace
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GOOGLE_GEMINI_BASE_URL=" + stub.srv.URL, "GEMINI_API_KEY=stub",
				"GEMINI_CLI_NO_RELAUNCH=true", "HOME=" + home, "USER=tester", "TOOLGATE_URL=" + s.URL, "TOOLGATE_TOKEN=" + agent}
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			cancel()
			if pid := findProcess("node", server, f.root); pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			results := strings.Join(stub.toolResults(), " | ")
			if os.Getenv("TOOLGATE_AGENTS_VERBOSE") != "" {
				t.Logf("tool results: %s", results)
			}
			if problem := geminiMCPProblem(f, results, sc.want, sc.reaches, sc.noAllow, sc.check); problem != "" {
				t.Errorf("%s: %s\ngemini (exit %s): %s %s\ntool results: %s", sc.note, problem, errString(err), tail(out.String()), tail(errb.String()), results)
			}
		})
	}
}

// geminiMCPProblem checks one Gemini run: the tool result, whether the call
// reached the server, the disk; without the allowance, that no call was
// made at all.
func geminiMCPProblem(f mcpFiles, results, want string, reaches, noAllow bool, check func(mcpFiles) string) string {
	log, _ := os.ReadFile(f.upstreamLog)
	if noAllow {
		if results != "" || len(log) > 0 {
			return "without its token the gateway still started the server (it read " + tail(string(log)) + ")"
		}
		return ""
	}
	if results == "" {
		return "gemini never sent the call's result"
	}
	if !strings.Contains(results, want) {
		return "the tool result lacks " + want
	}
	if reached := bytes.Contains(log, []byte(`"tools/call"`)); reached != reaches {
		return "the call reached the server: " + fmt.Sprint(reached)
	}
	if check != nil {
		return check(f)
	}
	return ""
}
