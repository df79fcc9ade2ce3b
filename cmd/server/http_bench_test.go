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
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/cmd/internal/workload"
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
	// The collector's target run sets (applyGCPercent), so that allocation
	// costs what it costs in the server.
	old := debug.SetGCPercent(defaultGCPercent)
	b.Cleanup(func() { debug.SetGCPercent(old) })
	if err := workload.Populate(dir); err != nil {
		b.Fatal(err)
	}
	tok, err := os.ReadFile(a.tokenFile)
	if err != nil {
		b.Fatal(err)
	}
	return a.handler, strings.TrimSpace(string(tok))
}

// benchCall is call j of a kind of the shared workload, as JSON.
func benchCall(b *testing.B, kind string, j int) []byte {
	call, ok := workload.Call(kind, j)
	if !ok {
		b.Fatalf("unknown call kind %q (known: %s)", kind, strings.Join(workload.Kinds(), ", "))
	}
	body, err := json.Marshal(call)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

var benchKinds = kindsFromEnv()

func benchPost(b *testing.B, h http.Handler, tok, path string, bodies [][]byte) {
	benchRequests(b, h, func(body io.Reader) *http.Request {
		req := httptest.NewRequest(http.MethodPost, path, body)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		return req
	}, bodies)
}

// benchRequests serves requests made by newReq (one per body, in turn)
// from parallel goroutines, checks each is answered 200 and reports, next
// to the wall time per request, the process's CPU time per request
// (cpu-ns/op): on a machine shared with other work it is far less noisy.
func benchRequests(b *testing.B, h http.Handler, newReq func(body io.Reader) *http.Request, bodies [][]byte) {
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPUTime()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		rd := bytes.NewReader(nil)
		for pb.Next() {
			rd.Reset(bodies[i%len(bodies)])
			i++
			w := httptest.NewRecorder()
			h.ServeHTTP(w, newReq(rd))
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body.String())
			}
		}
	})
	b.ReportMetric(float64(processCPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPUTime is the user and system CPU time of this process so far.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHTTPHealthz runs GET /healthz through the same stack: what
// evaluate is compared with.
func BenchmarkHTTPHealthz(b *testing.B) {
	withDecisionLog(b, func(b *testing.B, h http.Handler, tok string) {
		benchRequests(b, h, func(io.Reader) *http.Request {
			req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			return req
		}, [][]byte{nil})
	})
}

// BenchmarkHTTPEvaluate runs POST /api/v1/evaluate through the full chi
// stack of wire(): request id, request log, recoverer, auth, handler and
// the decision recorder (with and without the decision log).
func BenchmarkHTTPEvaluate(b *testing.B) {
	var bodies [][]byte
	for r := 0; r < 50; r++ {
		for _, kind := range benchKinds {
			bodies = append(bodies, benchCall(b, kind, r))
		}
	}
	withDecisionLog(b, func(b *testing.B, h http.Handler, tok string) {
		benchPost(b, h, tok, "/api/v1/evaluate", bodies)
	})
}

// BenchmarkHTTPEvaluateBatch runs POST /api/v1/evaluate/batch with 1,000
// calls per request; decisions/s is reported.
func BenchmarkHTTPEvaluateBatch(b *testing.B) {
	var bodies [][]byte
	for _, kind := range benchKinds {
		calls := make([]json.RawMessage, 1000)
		for i := range calls {
			calls[i] = json.RawMessage(benchCall(b, kind, i))
		}
		body, err := json.Marshal(map[string]any{"calls": calls})
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, body)
	}
	withDecisionLog(b, func(b *testing.B, h http.Handler, tok string) {
		benchPost(b, h, tok, "/api/v1/evaluate/batch", bodies)
		b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "decisions/s")
	})
}

// withDecisionLog runs f as the sub-benchmarks log=on and log=off, each on
// a server wired with or without the decision log.
func withDecisionLog(b *testing.B, f func(b *testing.B, h http.Handler, tok string)) {
	for _, logOn := range []bool{true, false} {
		name := "log=on"
		if !logOn {
			name = "log=off"
		}
		b.Run(name, func(b *testing.B) {
			h, tok := benchApp(b, logOn)
			f(b, h, tok)
		})
	}
}

// kindsFromEnv is the benchmarks' mix: BENCH_KINDS (comma-separated, e.g.
// benign,match to profile shell calls alone), else benign, match and path.
func kindsFromEnv() []string {
	if k := os.Getenv("BENCH_KINDS"); k != "" {
		return strings.Split(k, ",")
	}
	return []string{"benign", "match", "path"}
}
