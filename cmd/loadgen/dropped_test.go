package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/observe"
)

// TestLogDroppedReadsTheServersCounter reads the dropped counter from the
// server's own metrics registry (observe.NewMetrics, as the server serves
// it) with the run's token, before and after entries are dropped, and
// reports unknown without the counter (log off) or without the read right.
func TestLogDroppedReadsTheServersCounter(t *testing.T) {
	var dropped atomic.Uint64
	withLog := observe.NewMetrics(observe.MetricsOptions{LogDropped: func() float64 { return float64(dropped.Load()) }}).Handler()
	noLog := observe.NewMetrics(observe.MetricsOptions{}).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/metrics":
			http.NotFound(w, r)
		case r.Header.Get("Authorization") == "Bearer reader":
			withLog.ServeHTTP(w, r)
		case r.Header.Get("Authorization") == "Bearer nolog":
			noLog.ServeHTTP(w, r)
		default:
			http.Error(w, "forbidden", http.StatusForbidden)
		}
	}))
	defer srv.Close()

	before, ok := logDropped(srv.URL, "reader")
	if !ok || before != 0 {
		t.Fatalf("before: %v, %v; want 0, true", before, ok)
	}
	dropped.Add(250)
	after, ok := logDropped(srv.URL+"/", "reader")
	if !ok || after != 250 {
		t.Fatalf("after: %v, %v; want 250, true", after, ok)
	}
	if line := droppedLine(before, after, true, true, 1000); line != "decision log drops: 250 (25.0% of the run's decisions)" {
		t.Errorf("line: %q", line)
	}
	for _, c := range []struct{ note, token string }{{"log off", "nolog"}, {"no read right", "evaluate-only"}} {
		if n, ok := logDropped(srv.URL, c.token); ok {
			t.Errorf("%s: got %v, ok; want not readable", c.note, n)
		}
	}
	if line := droppedLine(0, 0, false, true, 1000); !strings.Contains(line, "unknown") {
		t.Errorf("unreadable: line %q does not say unknown", line)
	}
}
