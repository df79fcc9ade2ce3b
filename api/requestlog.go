package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5/middleware"
)

// RequestLog logs every request once it is answered: method, path, status,
// duration and chi's request id (put it after middleware.RequestID). It never
// logs headers, query strings or bodies, which may carry tokens and commands.
//
// A decision route (evaluate, evaluate/batch, check) that succeeds is logged
// at debug level: agents call these thousands of times a second, each
// decision is already in the decision log and the metrics, and one log line
// each would cost more than the decision. Their errors (4xx at info, 5xx at
// error) and every other request are logged as before.
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
				slog.String("request_id", middleware.GetReqID(r.Context())),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", status),
				slog.Duration("duration", time.Since(start)))
		})
	}
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
