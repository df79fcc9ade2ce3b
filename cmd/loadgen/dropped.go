package main

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// droppedMetric is the server's count of decision log entries dropped
// because the writer's queue was full: a run that drops entries measured a
// server that did not log every decision.
const droppedMetric = "toolgate_decision_log_dropped_total"

// logDropped reads droppedMetric from the server's /metrics with the
// run's token. ok is false when it cannot be read: no decision log (the
// server then has no such counter), or a token without the read right.
func logDropped(base, token string) (n float64, ok bool) {
	req, err := http.NewRequest(http.MethodGet, strings.TrimRight(base, "/")+"/metrics", nil)
	if err != nil {
		return 0, false
	}
	req.Header.Set("Authorization", "Bearer "+token)
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if v, found := strings.CutPrefix(sc.Text(), droppedMetric+" "); found {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return n, err == nil
		}
	}
	return 0, false
}

// droppedLine reports the entries the decision log dropped between two
// readings of logDropped, or why it cannot.
func droppedLine(before, after float64, okBefore, okAfter bool, decisions int64) string {
	if !okBefore || !okAfter {
		return "decision log drops: unknown (" + droppedMetric + " not readable: log off, or a token without the read right)"
	}
	d := after - before
	if decisions <= 0 {
		return fmt.Sprintf("decision log drops: %.0f", d)
	}
	return fmt.Sprintf("decision log drops: %.0f (%.1f%% of the run's decisions)", d, 100*d/float64(decisions))
}
