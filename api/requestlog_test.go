package api

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestRequestLog: which requests are logged at which level, with which id,
// and that no header but the client's request id, no query and no body
// reach the log.
func TestRequestLog(t *testing.T) {
	generated := regexp.MustCompile(`^[^ ]+/[A-Za-z0-9]+-[0-9]{6,}$`)
	cases := []struct {
		note, method, target string
		status               int
		clientID             string
		level                string // "" when not logged at info
	}{
		{note: "health probe", method: "GET", target: "/healthz", status: 200, level: "INFO"},
		{note: "client's id", method: "GET", target: "/healthz", status: 200, clientID: "trace-7", level: "INFO"},
		{note: "decision", method: "POST", target: "/api/v1/evaluate", status: 200},
		{note: "batch", method: "POST", target: "/api/v1/evaluate/batch", status: 200},
		{note: "decision refused", method: "POST", target: "/api/v1/evaluate", status: 400, level: "INFO"},
		{note: "server error", method: "POST", target: "/api/v1/evaluate", status: 500, level: "ERROR"},
		{note: "query not logged", method: "GET", target: "/api/v1/decisions?session=s3cr3t-query", status: 200, level: "INFO"},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		var out bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))
		h := RequestLog(log)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
		}))
		req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(`{"tool_args":{"command":"s3cr3t-body"}}`))
		req.Header.Set("Authorization", "Bearer s3cr3t-token")
		if tc.clientID != "" {
			req.Header.Set(RequestIDHeader, tc.clientID)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
		if strings.Contains(out.String(), "s3cr3t") {
			t.Errorf("%s: the log holds a secret: %s", tc.note, out.String())
		}
		if tc.level == "" {
			if out.Len() != 0 {
				t.Errorf("%s: logged at info: %s", tc.note, out.String())
			}
			continue
		}
		var line struct {
			Level, Msg, Method, Path string
			Status                   int
			ID                       string `json:"request_id"`
		}
		if err := json.Unmarshal(out.Bytes(), &line); err != nil {
			t.Fatalf("%s: %v: %q", tc.note, err, out.String())
		}
		path, _, _ := strings.Cut(tc.target, "?")
		if line.Level != tc.level || line.Msg != "request" || line.Method != tc.method || line.Path != path || line.Status != tc.status {
			t.Errorf("%s: got %s", tc.note, out.String())
		}
		switch {
		case tc.clientID != "" && line.ID != tc.clientID:
			t.Errorf("%s: request_id %q, want the client's %q", tc.note, line.ID, tc.clientID)
		case tc.clientID == "" && (!generated.MatchString(line.ID) || seen[line.ID]):
			t.Errorf("%s: request_id %q: want host/random-NNNNNN, new each time", tc.note, line.ID)
		}
		seen[line.ID] = true
	}
}
