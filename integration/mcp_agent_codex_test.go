package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCodexCallsMCPToolsThroughToolgate runs the real Codex against its
// model stand-in with the filesystem server wired as the README says
// (a [mcp_servers.fs] table of config.toml whose env_vars passes the
// token): an allowed read returns the file and a write a rule denies never
// reaches the server. --dangerously-bypass-approvals-and-sandbox keeps
// Codex's own approvals out of the way, so what is seen is toolgate's
// decision. The last run leaves env_vars out: Codex then passes the
// gateway no token, it exits before starting the server, and no tool is
// offered (the server is missing, never unguarded), which shows the
// README's env_vars is needed.
func TestCodexCallsMCPToolsThroughToolgate(t *testing.T) {
	codex := agentBinary(t, "codex")
	server := agentBinary(t, "server-filesystem")
	for _, sc := range mcpReadmeRuns {
		t.Run(sc.note, func(t *testing.T) {
			t.Parallel()
			s := StartServer(t, ServerOptions{ConfigYAML: mcpAgentPolicy})
			agent := createToken(t, s, "codex-mcp", "agent")
			home := t.TempDir()
			f := newMCPFiles(t, s, home)
			// Codex offers an MCP server's tools in a namespace mcp__SERVER.
			stub := newResponsesStub(t, sc.tool, sc.args(f))
			stub.namespace = "mcp__fs"
			args := append([]string{"mcp", "--name", "fs", "--url", s.URL, "--wait", "30", "--"}, mcpLoggedUpstream(f, server)...)
			var quoted []string
			for _, a := range args {
				quoted = append(quoted, strconv.Quote(a))
			}
			// Codex (0.147 on) gives an optional MCP server one second to
			// start, then begins the turn without its tools
			// (openai/codex#38689); node behind the gateway on a loaded
			// 2-core machine takes longer. mcp_optional_startup_grace_ms = 0
			// makes it wait up to the server's startup_timeout_sec.
			table := fmt.Sprintf("\n[mcp_servers.fs]\ncommand = %q\nargs = [%s]\nstartup_timeout_sec = 60\n", toolgateCLI(t), strings.Join(quoted, ", "))
			if !sc.noToken {
				table += "env_vars = [\"TOOLGATE_TOKEN\"]\n"
			}
			writeFile(t, filepath.Join(home, ".codex", "config.toml"), "mcp_optional_startup_grace_ms = 0\n"+strings.Replace(codexProvider, "%s", stub.srv.URL, 1)+table)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			var out, errb bytes.Buffer
			var err error
			// Should Codex still begin without the MCP tools (its startup
			// wait ran out), the model stand-in never calls the tool, so
			// such a run is tried again, twice at most. A run where the
			// tool was offered is never retried.
			for attempt := 0; attempt < 3 && (attempt == 0 || (!sc.noToken && !stub.wasOffered())); attempt++ {
				if attempt > 0 {
					t.Logf("Codex's turn began without the MCP tools; run %d", attempt+1)
				}
				out.Reset()
				errb.Reset()
				cmd := exec.CommandContext(ctx, codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "do the task")
				cmd.Dir = s.Workspace
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "USER=tester", "TOOLGATE_TOKEN=" + agent, "STUB_API_KEY=stub"}
				cmd.Stdout, cmd.Stderr = &out, &errb
				err = cmd.Run()
				if pid := findProcess("node", server, f.root); pid > 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			results := strings.Join(stub.toolResults(), " | ")
			if os.Getenv("TOOLGATE_AGENTS_VERBOSE") != "" {
				t.Logf("tool results: %s", results)
			}
			if problem := sc.problem(f, results); problem != "" {
				t.Errorf("%s\ncodex (exit %s): %s %s\ntool results: %s", problem, errString(err), tail(out.String()), tail(errb.String()), results)
			}
		})
	}
}
