package integration

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scrape returns the samples of /metrics by name and labels, as written.
func scrape(t *testing.T, s *Server) map[string]float64 {
	t.Helper()
	status, body := s.Do("GET", "/metrics", nil)
	if status != 200 {
		t.Fatalf("GET /metrics: status %d: %s", status, body)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// TestMetricsAfterKnownTraffic scrapes /metrics after a known set of
// decisions, a reload and a policy problem.
func TestMetricsAfterKnownTraffic(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: decisionsConfig})
	for range 3 {
		evaluate(t, s, "bash", map[string]any{"command": "ls"})
	}
	evaluate(t, s, "bash", map[string]any{"command": "make"})
	evaluate(t, s, "read_file", map[string]any{"path": "a.txt"})
	evaluate(t, s, "my_custom_tool_1", nil)
	evaluate(t, s, "my_custom_tool_2", nil)

	m := scrape(t, s)
	want := map[string]float64{
		`toolgate_decisions_total{level="allow",tool="bash"}`:      3,
		`toolgate_decisions_total{level="ask",tool="bash"}`:        1,
		`toolgate_decisions_total{level="allow",tool="read_file"}`: 1,
		`toolgate_decisions_total{level="ask",tool="other"}`:       2,
		`toolgate_evaluation_duration_seconds_count`:               7,
		`toolgate_config_problems`:                                 0,
		`toolgate_approvals_pending`:                               0,
		`toolgate_decision_log_dropped_total`:                      0,
	}
	for k, v := range want {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	for k := range m {
		if strings.Contains(k, "my_custom_tool") {
			t.Errorf("an unknown tool became a label: %s", k)
		}
	}
	if _, ok := m["toolgate_websocket_clients"]; !ok {
		t.Errorf("toolgate_websocket_clients is missing")
	}

	// A broken rule: a reload and a validation problem.
	writeFile(t, s.ConfigDir+"/config.yaml", decisionsConfig+"    - {id: bad, tools: [bash], pattern: \"x\", action: maybe}\n")
	WaitFor(t, 10*time.Second, "the reload to show a problem", func() bool {
		m = scrape(t, s)
		return m["toolgate_config_problems"] >= 1 && m["toolgate_config_reloads_total"] >= 1
	})

	if status, _ := s.DoToken("", "GET", "/metrics", nil); status != 401 {
		t.Errorf("/metrics without a token: status %d, want 401", status)
	}
}
