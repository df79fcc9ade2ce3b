package api

import (
	"log/slog"
	"net/http"

	"github.com/toolgate/toolgate/service"
)

// Error is an API error: an HTTP status, a stable code, a message and
// optional details, written as {"error": {...}} (openapi.yaml). It is the
// service's classified error.
type Error = service.Error

// Detail names one problem, by field or place.
type Detail = service.Detail

func badRequest(field, format string, args ...any) *Error {
	return service.BadRequest(field, format, args...)
}

// toAPIError turns any error into an API error through the server's one
// classification (service.Classify).
func toAPIError(err error) *Error { return service.Classify(err) }

// writeError is the one place errors become HTTP responses.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := toAPIError(err)
	if e.Status >= 500 {
		slog.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, e.Status, map[string]any{"error": e})
}
