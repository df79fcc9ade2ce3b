package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMCPGatewayOverhead measures what `toolgate mcp` adds to an allowed
// tools/call: the real filesystem server from npm driven directly and
// through the real CLI and server, the same read_text_file in turns of 50
// calls (so that the shared machine's load falls on both alike), of a
// small file and of a 1 MiB one (the gate reads every answer the server
// sends, to filter tools/list), the /api/v1/check that the gateway sends
// for each call beside them, and the gateway's memory (VmRSS and VmHWM of
// the toolgate mcp process beside the server's own). It logs the figures;
// figures, not assertions (BENCHMARKS.md, "MCP gateway").
// TOOLGATE_MCP_BENCH_ROUNDS sets the turns (default 6; a fifth of them for the large file).
func TestMCPGatewayOverhead(t *testing.T) {
	server := agentBinary(t, "server-filesystem")
	s := StartServer(t, ServerOptions{ConfigYAML: mcpAgentPolicy})
	agent := createToken(t, s, "mcp-bench", "agent")
	root := filepath.Join(s.Workspace, "files")
	small, large := filepath.Join(root, "small.txt"), filepath.Join(root, "large.txt")
	writeFile(t, small, strings.Repeat("a line of a small file\n", 20))
	writeFile(t, large, strings.Repeat("a line of a large file, one of many\n", 1<<20/36))
	direct := startStdioMCP(t, exec.Command("node", server, root))
	gated := startGateway(t, agent, s.URL, root)
	rounds := 6
	if v, err := strconv.Atoi(os.Getenv("TOOLGATE_MCP_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	for _, f := range []struct {
		file   string
		rounds int
	}{{small, rounds}, {large, max(1, rounds/5)}} {
		d, g, c := measureMCPReads(t, s, agent, direct, gated, f.file, f.rounds)
		med := func(l []time.Duration) time.Duration { return l[len(l)/2] }
		p99 := func(l []time.Duration) time.Duration { return l[len(l)*99/100] }
		t.Logf("read_text_file of %s, %d calls each: direct median %v p99 %v; through toolgate mcp median %v p99 %v; /api/v1/check alone median %v p99 %v",
			filepath.Base(f.file), len(d), med(d), p99(d), med(g), p99(g), med(c), p99(c))
		t.Logf("added by the gateway: median %v (%.2fx the server's own call), p99 %v (%.2fx)",
			med(g)-med(d), float64(med(g))/float64(med(d)), p99(g)-p99(d), float64(p99(g))/float64(p99(d)))
	}
	gatePID := gated.cmd.Process.Pid
	t.Logf("memory after the calls: toolgate mcp %s; the server behind it %s; the server alone %s",
		procMemory(gatePID), procMemory(childOf(gatePID)), procMemory(direct.cmd.Process.Pid))
}

// measureMCPReads times read_text_file of file directly and through the
// gateway, and the gateway's /api/v1/check alone (over a kept-alive
// connection, as the gateway's is), after a warm-up (the JIT, the
// connections); each list comes back sorted.
func measureMCPReads(t *testing.T, s *Server, agent string, direct, gated *mcpClient, file string, rounds int) (d, g, c []time.Duration) {
	want, _ := os.ReadFile(file)
	read := func(mc *mcpClient) time.Duration {
		start := time.Now()
		if text, isErr := mc.call("read_text_file", map[string]any{"path": file}); isErr || text != string(want) {
			t.Fatalf("read_text_file answered %.200q (error %v)", text, isErr)
		}
		return time.Since(start)
	}
	body, _ := json.Marshal(map[string]any{"tool_name": "mcp__fs__read_text_file",
		"tool_args": map[string]any{"path": file}, "session_id": "bench", "wait_seconds": 20})
	check := func() time.Duration {
		start := time.Now()
		resp := s.Request(agent, "POST", "/api/v1/check", body, nil)
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !strings.Contains(string(answer), `"allow"`) {
			t.Fatalf("check: %d %s %v", resp.StatusCode, answer, err)
		}
		return time.Since(start)
	}
	for range 10 {
		read(direct)
		read(gated)
		check()
	}
	for range rounds {
		for range 50 {
			d = append(d, read(direct))
		}
		for range 50 {
			g = append(g, read(gated))
		}
		for range 50 {
			c = append(c, check())
		}
	}
	for _, l := range [][]time.Duration{d, g, c} {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	}
	return d, g, c
}

// procMemory is a process's resident and peak resident memory from
// /proc/PID/status.
func procMemory(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	var rss, hwm string
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rss = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			hwm = strings.TrimSpace(v)
		}
	}
	return "RSS " + rss + " (peak " + hwm + ")"
}

// childOf is the first child of a process (of any of its threads), or 0.
func childOf(pid int) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, task := range tasks {
		data, _ := os.ReadFile(task)
		if fields := strings.Fields(string(data)); len(fields) > 0 {
			child, _ := strconv.Atoi(fields[0])
			return child
		}
	}
	return 0
}
