package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// mcpAgentPolicy is the policy of the Claude Code gateway test: reads of
// the filesystem server run, a rule denies every write_file (whose level
// alone would allow it), an edit asks a person, and a path outside the
// workspace is refused whatever the tool.
const mcpAgentPolicy = `permissions:
  enabled: true
  schema: tiered_policy
  permission_mode: normal
  defaults: {"*": ask}
  tools:
    mcp__fs__read_text_file: allow
    mcp__fs__list_allowed_directories: allow
    mcp__fs__write_file: allow
    mcp__fs__edit_file: ask
  rules:
    - {id: no_mcp_writes, tools: [mcp__fs__write_file], pattern: "**", action: deny}
  external_directory:
    "*": deny
`

// mcpFiles are one run's files: root inside toolgate's workspace, outside
// beside the workspace. The filesystem server may read both (see
// runMCPAgentScenario), so only toolgate can refuse a read of far.
type mcpFiles struct {
	root, outside string
	canary, far   string
	fifo          string // a read of it blocks the server until it is killed
	upstreamLog   string // every message the server received
	configFile    string
}

const (
	canaryText = "the canary lives\n"
	farText    = "far away, never read\n"
)

// mcpAgentScenario is one MCP tool call the model stand-in asks Claude
// Code for, and what must then be true: in the tool result the model
// reads, in what the server received, on disk and in the decision log.
type mcpAgentScenario struct {
	note   string
	tool   string // the server's tool name; Claude Code calls it mcp__fs__TOOL
	args   func(f mcpFiles) map[string]any
	answer string // a person's answer to the ask: allow_once or deny
	down   bool   // toolgate is stopped before the run
	crash  bool   // the server is killed while the call is in it
	// control: run once with the server wired directly, without toolgate,
	// where the call must do what toolgate stops (so the check can fail).
	control bool

	isError       bool
	want, never   string // text the tool result must, must not hold
	reachesServer bool
	logged, rule  string // the decision log's level and a part of its matched rule
	check         func(f mcpFiles) string
}

var mcpAgentScenarios = []mcpAgentScenario{
	{note: "an allowed read returns the file", tool: "read_text_file",
		args: func(f mcpFiles) map[string]any { return map[string]any{"path": f.canary} },
		want: "the canary lives", reachesServer: true, logged: "allow", rule: "tools.mcp__fs__read_text_file"},
	{note: "a read outside the workspace is refused before the server", tool: "read_text_file", control: true,
		args:    func(f mcpFiles) map[string]any { return map[string]any{"path": f.far} },
		isError: true, want: "toolgate refused", never: "far away", logged: "deny", rule: "external_directory"},
	{note: "a write a rule denies is refused and the canary kept", tool: "write_file", control: true,
		args:    func(f mcpFiles) map[string]any { return map[string]any{"path": f.canary, "content": "overwritten\n"} },
		isError: true, want: "no_mcp_writes", logged: "deny", rule: "no_mcp_writes",
		check: func(f mcpFiles) string { return unchanged(f.canary, canaryText) }},
	{note: "an ask a person allows runs", tool: "edit_file", answer: "allow_once",
		args: func(f mcpFiles) map[string]any {
			return map[string]any{"path": f.canary, "edits": []map[string]any{{"oldText": "lives", "newText": "was edited"}}}
		},
		reachesServer: true, logged: "ask",
		check: func(f mcpFiles) string { return unchanged(f.canary, "the canary was edited\n") }},
	{note: "an ask a person denies does not run", tool: "edit_file", answer: "deny",
		args: func(f mcpFiles) map[string]any {
			return map[string]any{"path": f.canary, "edits": []map[string]any{{"oldText": "lives", "newText": "was edited"}}}
		},
		isError: true, want: "toolgate refused", logged: "ask",
		check: func(f mcpFiles) string { return unchanged(f.canary, canaryText) }},
	{note: "the server crashing in the call gives an error, not a hang", tool: "read_text_file", crash: true,
		args:    func(f mcpFiles) map[string]any { return map[string]any{"path": f.fifo} },
		isError: true, reachesServer: true, logged: "allow"},
	{note: "toolgate down refuses the call", tool: "read_text_file", down: true,
		args:    func(f mcpFiles) map[string]any { return map[string]any{"path": f.canary} },
		isError: true, want: "cannot reach toolgate", never: "the canary lives"},
}

// TestClaudeCodeCallsMCPToolsThroughToolgate runs the real Claude Code
// (its native binary) headless against the model stand-in, with the real
// filesystem MCP server from npm wired through `toolgate mcp` by
// --mcp-config, and checks what each call really did: the tool result
// Claude Code sent back to the model, whether the call reached the server
// (a copy of everything the server read), the canary files, and toolgate's
// decision log.
//
// Claude Code's own permission checks are out of the way so that what is
// seen is toolgate's decision: --allowedTools mcp__fs allows every tool of
// the server in Claude Code's default mode, and no toolgate hook is set up
// (a PreToolUse hook would decide mcp__fs__* calls before the gateway did).
// The controls, the same calls with the server wired directly, show that
// Claude Code then does run them.
func TestClaudeCodeCallsMCPToolsThroughToolgate(t *testing.T) {
	claude := agentBinary(t, "claude-code")
	server := agentBinary(t, "server-filesystem")
	type run struct {
		sc     mcpAgentScenario
		direct bool
	}
	var runs []run
	for _, sc := range mcpAgentScenarios {
		runs = append(runs, run{sc, false})
		if sc.control {
			runs = append(runs, run{sc, true})
		}
	}
	sem := make(chan struct{}, 3)
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if problem := runMCPAgentScenario(t, claude, server, r.sc, r.direct); problem != "" {
				what := "through toolgate"
				if r.direct {
					what = "control without toolgate"
				}
				t.Errorf("%s, %s: %s", r.sc.note, what, problem)
			}
		}()
	}
	wg.Wait()
}

// runMCPAgentScenario runs one scenario with a fresh server, files and
// Claude Code home; it returns what went wrong, or "".
func runMCPAgentScenario(t *testing.T, claude, server string, sc mcpAgentScenario, direct bool) string {
	s := StartServer(t, ServerOptions{ConfigYAML: mcpAgentPolicy})
	defer s.Stop()
	agent := createToken(t, s, "claude-mcp", "agent")
	home := t.TempDir()
	f := newMCPFiles(t, s, home)
	defer func() {
		// A server a failed run left blocked on the FIFO.
		if pid := findProcess("node", server, f.root); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	writeMCPConfig(t, f, server, s.URL, agent, direct)
	stub := newAnthropicStub(t, "mcp__fs__"+sc.tool, sc.args(f))
	if sc.down {
		s.Stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "do the task", "--mcp-config", f.configFile, "--strict-mcp-config",
		"--permission-mode", "default", "--allowedTools", "mcp__fs", "--output-format", "json")
	// Claude Code gives the server its working directory as its one root
	// (MCP roots), which replaces the roots on the server's command line:
	// it runs in the workspace's parent, which holds outside too.
	cmd.Dir = filepath.Dir(s.Workspace)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "USER=tester", "ANTHROPIC_BASE_URL=" + stub.srv.URL,
		"ANTHROPIC_API_KEY=sk-ant-stub", "IS_SANDBOX=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "ENABLE_TOOL_SEARCH=false"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return err.Error()
	}
	done := make(chan struct{})
	if sc.answer != "" && !direct {
		go answerFirstAsk(s, sc.answer, done)
	}
	if sc.crash {
		go killServerInCall(f, server, done)
	}
	err := cmd.Wait()
	close(done)
	results := strings.Join(stub.toolResults(), " | ")
	why := "\nclaude (exit " + errString(err) + "): " + tail(out.String()) + tail(errb.String()) + "\ntool results: " + results
	if ctx.Err() != nil {
		return "claude did not finish within 90 s" + why
	}
	if len(stub.toolResults()) == 0 {
		return "claude never sent the call's result" + why
	}
	if os.Getenv("TOOLGATE_AGENTS_VERBOSE") != "" {
		t.Logf("%s (direct %v): %s", sc.note, direct, results)
	}
	if direct {
		return mcpControlProblem(sc, f, results)
	}
	if problem := mcpResultProblem(sc, f, results); problem != "" {
		return problem + why
	}
	if sc.logged != "" {
		return mcpLogProblem(t, s, sc)
	}
	return ""
}

// newMCPFiles makes a run's files: root inside toolgate's workspace with
// the canary and a FIFO, and far beside the workspace.
func newMCPFiles(t *testing.T, s *Server, home string) mcpFiles {
	f := mcpFiles{root: filepath.Join(s.Workspace, "files"), outside: filepath.Join(filepath.Dir(s.Workspace), "outside"),
		upstreamLog: filepath.Join(home, "upstream.log"), configFile: filepath.Join(home, "mcp.json")}
	f.canary, f.far, f.fifo = filepath.Join(f.root, "canary.txt"), filepath.Join(f.outside, "far.txt"), filepath.Join(f.root, "stuck.fifo")
	writeFile(t, f.canary, canaryText)
	writeFile(t, f.far, farText)
	if err := syscall.Mkfifo(f.fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// writeMCPConfig writes Claude Code's --mcp-config: the server fs is
// `toolgate mcp --name fs -- UPSTREAM`, or UPSTREAM itself for a control.
// UPSTREAM is the filesystem server under bash, which execs it with its
// input copied to the upstream log by tee: the log is what the server
// read, and its process is node itself.
func writeMCPConfig(t *testing.T, f mcpFiles, server, url, token string, direct bool) {
	upstream := []string{"bash", "-c", `exec node "$@" < <(exec tee -a "$0")`, f.upstreamLog, server, f.root, f.outside}
	command, args := upstream[0], upstream[1:]
	if !direct {
		command = toolgateCLI(t)
		args = append([]string{"mcp", "--name", "fs", "--wait", "30", "--"}, upstream...)
	}
	cfg := map[string]any{"mcpServers": map[string]any{"fs": map[string]any{"type": "stdio", "command": command, "args": args,
		"env": map[string]string{"TOOLGATE_URL": url, "TOOLGATE_TOKEN": token}}}}
	data, _ := json.MarshalIndent(cfg, "", "  ")
	writeFile(t, f.configFile, string(data))
}

// killServerInCall waits until the server has read a tools/call (it is
// then blocked reading the FIFO) and kills it, as a crash would.
func killServerInCall(f mcpFiles, server string, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-time.After(100 * time.Millisecond):
		}
		if b, _ := os.ReadFile(f.upstreamLog); !bytes.Contains(b, []byte(`"tools/call"`)) {
			continue
		}
		if pid := findProcess("node", server, f.root); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return
		}
	}
}

// findProcess is the process whose command line is args and more: for
// `node SERVER ROOT`, the server's (the gateway's holds them too, later).
func findProcess(args ...string) int {
	prefix := []byte(strings.Join(args, "\x00") + "\x00")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.HasPrefix(cmdline, prefix) {
			return pid
		}
	}
	return 0
}

// mcpResultProblem checks the tool result, the upstream log and the disk.
func mcpResultProblem(sc mcpAgentScenario, f mcpFiles, results string) string {
	if got := strings.Contains(results, "error=true"); got != sc.isError {
		return "the tool result's is_error is " + strconv.FormatBool(got)
	}
	if sc.want != "" && !strings.Contains(results, sc.want) {
		return "the tool result lacks " + strconv.Quote(sc.want)
	}
	if sc.never != "" && strings.Contains(results, sc.never) {
		return "the tool result holds " + strconv.Quote(sc.never)
	}
	log, _ := os.ReadFile(f.upstreamLog)
	if reached := bytes.Contains(log, []byte(`"tools/call"`)); reached != sc.reachesServer {
		return "the call reached the server: " + strconv.FormatBool(reached) + "\nit read: " + tail(string(log))
	}
	if sc.check != nil {
		return sc.check(f)
	}
	return ""
}

// mcpControlProblem checks that without toolgate the call did what
// toolgate stops: far's text reached the model, or the canary changed.
func mcpControlProblem(sc mcpAgentScenario, f mcpFiles, results string) string {
	if sc.never != "" && !strings.Contains(results, sc.never) {
		return "without toolgate the result lacks " + strconv.Quote(sc.never) + ", so this check proves nothing: " + results
	}
	if sc.check != nil && sc.check(f) == "" {
		return "without toolgate the call did no harm, so this check proves nothing: " + results
	}
	return ""
}

// mcpLogProblem checks toolgate's decision log for the call.
func mcpLogProblem(t *testing.T, s *Server, sc mcpAgentScenario) string {
	name := "mcp__fs__" + sc.tool
	var entries []string
	for _, d := range listDecisions(t, s, "?limit=100").Decisions {
		if d.ToolName != name {
			continue
		}
		rule := ""
		if d.MatchedRule != nil {
			rule = *d.MatchedRule
		}
		if d.Level == sc.logged && strings.Contains(rule, sc.rule) {
			return ""
		}
		entries = append(entries, d.Level+" "+rule)
	}
	return "the decision log has no " + sc.logged + " " + sc.rule + " for " + name + ": " + strings.Join(entries, ", ")
}

// mcpReadmeRun is one call an agent wired as the README says makes
// through the gateway, and what must then be true.
type mcpReadmeRun struct {
	note, tool string
	args       func(f mcpFiles) map[string]any
	noToken    bool   // the wiring leaves out what passes the gateway its token
	want       string // in the tool result
	reaches    bool   // the call is in what the server read
	check      func(f mcpFiles) string
}

var mcpReadmeRuns = []mcpReadmeRun{
	{note: "an allowed read returns the file", tool: "read_text_file", want: "the canary lives", reaches: true,
		args: func(f mcpFiles) map[string]any { return map[string]any{"path": f.canary} }},
	{note: "a write a rule denies never reaches the server", tool: "write_file", want: "no_mcp_writes",
		args:  func(f mcpFiles) map[string]any { return map[string]any{"path": f.canary, "content": "overwritten\n"} },
		check: func(f mcpFiles) string { return unchanged(f.canary, canaryText) }},
	{note: "without the token the gateway starts no server", tool: "read_text_file", noToken: true,
		args: func(f mcpFiles) map[string]any { return map[string]any{"path": f.canary} }},
}

// mcpLoggedUpstream is the filesystem server's command line with what it
// reads copied to the upstream log (see writeMCPConfig).
func mcpLoggedUpstream(f mcpFiles, server string) []string {
	return []string{"bash", "-c", `exec node "$@" < <(exec tee -a "$0")`, f.upstreamLog, server, f.root}
}

// problem checks one run: the tool result, whether the call reached the
// server, the disk; without the token, that the server never started.
func (r mcpReadmeRun) problem(f mcpFiles, results string) string {
	log, _ := os.ReadFile(f.upstreamLog)
	if r.noToken {
		if results != "" || len(log) > 0 {
			return "without its token the gateway still started the server (it read " + tail(string(log)) + ")"
		}
		return ""
	}
	if results == "" {
		return "the agent never sent the call's result"
	}
	if !strings.Contains(results, r.want) {
		return "the tool result lacks " + r.want
	}
	if reached := bytes.Contains(log, []byte(`"tools/call"`)); reached != r.reaches {
		return "the call reached the server: " + strconv.FormatBool(reached)
	}
	if r.check != nil {
		return r.check(f)
	}
	return ""
}
