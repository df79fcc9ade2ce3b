package integration

import (
	"bytes"
	"context"
	"encoding/json"
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
	for _, sc := range mcpReadmeRuns {
		t.Run(sc.note, func(t *testing.T) {
			t.Parallel()
			s := StartServer(t, ServerOptions{ConfigYAML: mcpAgentPolicy})
			agent := createToken(t, s, "gemini-mcp", "agent")
			home := t.TempDir()
			f := newMCPFiles(t, s, home)
			upstream := mcpLoggedUpstream(f, server)
			security := map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"},
				"environmentVariableRedaction": map[string]any{"allowed": []string{"TOOLGATE_TOKEN"}}}
			if sc.noToken {
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
			if problem := sc.problem(f, results); problem != "" {
				t.Errorf("%s\ngemini (exit %s): %s %s\ntool results: %s", problem, errString(err), tail(out.String()), tail(errb.String()), results)
			}
		})
	}
}
