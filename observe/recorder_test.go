package observe

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/decisionlog"
)

// keptLog keeps what the recorder hands it.
type keptLog struct {
	service.NopDecisionLog
	entries []decisionlog.Entry
}

func (k *keptLog) Enqueue(e decisionlog.Entry) bool { k.entries = append(k.entries, e); return true }

// TestRecorderLogsAndCounts: each decision reaches the log with what the
// door handed over, and the metrics count it by level and tool, skipped
// channels apart; an unknown tool is counted as "other", not by its name.
func TestRecorderLogsAndCounts(t *testing.T) {
	log := &keptLog{}
	m := NewMetrics(MetricsOptions{})
	r := NewRecorder(log, m, false)
	start := time.Now().Add(-3 * time.Millisecond)
	cases := []struct {
		note string
		req  *engine.Request
		dec  engine.Decision
	}{
		{"an ask by a rule", &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make"}), ChannelID: "web"},
			engine.Decision{Level: policy.Ask, MatchedRule: "tiered_policy:tools.bash"}},
		{"a skipped channel", &engine.Request{Call: engine.NewCall("bash", nil), ChannelID: "feishu"},
			engine.Decision{Level: policy.Allow, Reason: engine.SkippedReasonPrefix + "feishu"}},
		{"a tool nobody knows", &engine.Request{Call: engine.NewCall("secret_tool_name_xyz", nil)}, engine.Decision{Level: policy.Deny}},
	}
	for _, c := range cases {
		r.Observe(service.Observation{Source: service.SourceEvaluate, Agent: "codex", Session: "s1", Start: start}, c.req, c.dec)
	}
	if len(log.entries) != len(cases) {
		t.Fatalf("%d entries logged, want %d", len(log.entries), len(cases))
	}
	for i, c := range cases {
		e := log.entries[i]
		if e.Tool != c.req.Call.Tool() || e.Level != c.dec.Level.String() || e.Agent != "codex" || e.Session != "s1" ||
			e.Source != service.SourceEvaluate || e.MatchedRule != c.dec.MatchedRule || e.LatencyMicros < 3000 {
			t.Errorf("%s: logged %+v", c.note, e)
		}
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, want := range []string{
		`toolgate_decisions_total{level="ask",tool="bash"} 1`,
		`toolgate_decisions_total{level="allow",tool="bash"} 1`,
		`toolgate_decisions_total{level="deny",tool="other"} 1`,
		"toolgate_skipped_channel_total 1",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, "secret_tool_name_xyz") {
		t.Error("an unknown tool's name reached the metrics' labels")
	}
}
