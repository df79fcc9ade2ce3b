package api

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5/middleware"
)

// RequestIDHeader is the request header whose value, when a client sends
// one, is logged as the request's id instead of one made here.
const RequestIDHeader = "X-Request-Id"

// RequestLog logs every request once it is answered: method, path, status,
// duration and a request id. It never logs headers (but the client's
// X-Request-Id), query strings or bodies, which may carry tokens and
// commands.
//
// A decision route (evaluate, evaluate/batch, check) that succeeds is logged
// at debug level: agents call these thousands of times a second, each
// decision is already in the decision log and the metrics, and one log line
// each would cost more than the decision. Their errors (4xx at info, 5xx at
// error) and every other request are logged as before.
//
// The id is made only for a request that is logged: nothing else reads it,
// and making it for every request (a formatted string, a context value and
// a copy of the request) cost more than deciding a call's JSON.
func RequestLog(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			level := requestLevel(r.URL.Path, status)
			if !log.Enabled(r.Context(), level) {
				return
			}
			log.LogAttrs(r.Context(), level, "request",
				slog.String("request_id", requestID(r)),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", status),
				slog.Duration("duration", time.Since(start)))
		})
	}
}

// requestIDs numbers the requests that are logged.
var requestIDs atomic.Uint64

// requestIDPrefix starts every id this process makes: the host name and a
// random part, so that ids from several processes or restarts differ.
var requestIDPrefix = newRequestIDPrefix()

func newRequestIDPrefix() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	var b [9]byte
	_, _ = rand.Read(b[:])
	return host + "/" + strings.NewReplacer("+", "", "/", "").Replace(base64.StdEncoding.EncodeToString(b[:]))
}

// requestID is the id a request is logged with: the client's X-Request-Id,
// else host/random-000042.
func requestID(r *http.Request) string {
	if id := r.Header.Get(RequestIDHeader); id != "" {
		return id
	}
	return fmt.Sprintf("%s-%06d", requestIDPrefix, requestIDs.Add(1))
}

// requestLevel is the level a request is logged at.
func requestLevel(path string, status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status < 400 && isDecisionRoute(path):
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// isDecisionRoute reports whether path is one of the high-rate decision
// routes.
func isDecisionRoute(path string) bool {
	switch path {
	case "/api/v1/evaluate", "/api/v1/evaluate/batch", "/api/v1/check",
		"/api/v1/hooks/claude-code", "/api/v1/hooks/codex", "/api/v1/hooks/gemini":
		return true
	}
	return false
}
