package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// soak reports whether the long mode (TOOLGATE_SOAK=1, `make soak`) is on.
func soak() bool { return os.Getenv("TOOLGATE_SOAK") == "1" }

// bySoak picks the CI value or the soak value.
func bySoak[T any](ci, long T) T {
	if soak() {
		return long
	}
	return ci
}

// relClient is an HTTP client that reports transport errors instead of
// failing the test: a killed server makes requests fail, which is expected.
var relClient = &http.Client{Timeout: 20 * time.Second}

// relDo sends a JSON request with a token and returns status and body, or
// the transport error.
func relDo(s *Server, token, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := relClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// relLevel evaluates a call and returns its level; it fails the test on
// anything but a 200.
func relLevel(t testing.TB, s *Server, tool string, args map[string]any) string {
	t.Helper()
	st, body, err := relDo(s, s.Token, "POST", "/api/v1/evaluate", map[string]any{"tool_name": tool, "tool_args": args})
	if err != nil || st != 200 {
		t.Fatalf("evaluate %s %v: %d %s %v", tool, args, st, body, err)
	}
	return DecodeJSON[struct {
		Level string `json:"level"`
	}](t, body).Level
}

// serverRSS is the resident set size of the server process in KiB.
func serverRSS(t testing.TB, s *Server) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Fatalf("read /proc status: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

// metricValue reads one unlabelled metric from /metrics; ok is false when
// the route or the metric is missing.
func metricValue(s *Server, name string) (float64, bool) {
	st, body, err := relDo(s, s.Token, "GET", "/metrics", nil)
	if err != nil || st != 200 {
		return 0, false
	}
	for _, l := range strings.Split(string(body), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == name {
			v, err := strconv.ParseFloat(f[1], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// routeMounted reports whether the server knows a route (anything but 404
// and 405 for the admin token).
func routeMounted(s *Server, method, path string, body any) bool {
	st, _, err := relDo(s, s.Token, method, path, body)
	return err == nil && st != 404 && st != 405
}

// readyProblems returns the body of /readyz.
func readyBody(t testing.TB, s *Server) (int, string) {
	t.Helper()
	st, body, err := relDo(s, s.Token, "GET", "/readyz", nil)
	if err != nil {
		t.Fatalf("readyz: %v", err)
	}
	return st, string(body)
}
