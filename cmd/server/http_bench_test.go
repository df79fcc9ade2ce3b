package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchApp wires the real server (as run does) in a temp config dir and
// returns its handler and the admin token. The logger writes text at info
// level to io.Discard, so request logging costs what it costs in production
// minus the write.
func benchApp(b *testing.B, decisionLog bool) (http.Handler, string) {
	b.Helper()
	dir := b.TempDir()
	c := config{configDir: filepath.Join(dir, "config"), workspace: dir, logFormat: "text", logLevel: "info",
		decisionLog: decisionLog, logRetention: 720 * 3600e9, logMaxRows: 1_000_000, approvalTimeout: 300e9}
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	a, err := wire(c, log)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.shutdown(); a.close() })
	tok, err := os.ReadFile(a.tokenFile)
	if err != nil {
		b.Fatal(err)
	}
	return a.handler, strings.TrimSpace(string(tok))
}

var benchCalls = []string{
	`{"tool_name":"bash","tool_args":{"command":"npm run build --silent"}}`,
	`{"tool_name":"bash","tool_args":{"command":"git push --force origin main"}}`,
	`{"tool_name":"read_file","tool_args":{"path":"src/main.go"}}`,
}

func benchPost(b *testing.B, h http.Handler, tok, path string, bodies [][]byte) {
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		rd := bytes.NewReader(nil)
		for pb.Next() {
			rd.Reset(bodies[i%len(bodies)])
			i++
			req := httptest.NewRequest(http.MethodPost, path, rd)
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body.String())
			}
		}
	})
}

// BenchmarkHTTPEvaluate runs POST /api/v1/evaluate through the full chi
// stack of wire(): request id, request log, recoverer, auth, handler and
// the decision recorder (with and without the decision log).
func BenchmarkHTTPEvaluate(b *testing.B) {
	var bodies [][]byte
	for _, c := range benchCalls {
		bodies = append(bodies, []byte(c))
	}
	for _, logOn := range []bool{true, false} {
		name := "log=on"
		if !logOn {
			name = "log=off"
		}
		b.Run(name, func(b *testing.B) {
			h, tok := benchApp(b, logOn)
			benchPost(b, h, tok, "/api/v1/evaluate", bodies)
		})
	}
}

// BenchmarkHTTPEvaluateBatch runs POST /api/v1/evaluate/batch with 1,000
// calls per request; decisions/s is reported.
func BenchmarkHTTPEvaluateBatch(b *testing.B) {
	var bodies [][]byte
	for _, c := range benchCalls {
		calls := make([]json.RawMessage, 1000)
		for i := range calls {
			calls[i] = json.RawMessage(c)
		}
		body, err := json.Marshal(map[string]any{"calls": calls})
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, body)
	}
	for _, logOn := range []bool{true, false} {
		name := "log=on"
		if !logOn {
			name = "log=off"
		}
		b.Run(name, func(b *testing.B) {
			h, tok := benchApp(b, logOn)
			benchPost(b, h, tok, "/api/v1/evaluate/batch", bodies)
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}
