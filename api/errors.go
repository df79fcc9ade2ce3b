package api

import (
	"log/slog"
	"net/http"

	"github.com/toolgate/toolgate/service"
)

// ErrorResponse is the body of every REST error answer: the service's
// classified error (a kind, whose HTTP status is httpStatus's, a stable
// code, a message and optional details), as openapi.yaml describes it.
type ErrorResponse struct {
	Error *service.Error `json:"error"`
}

// writeError is the one place errors become HTTP responses.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := service.Classify(err)
	status := httpStatus(e.Kind)
	if status >= 500 {
		slog.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, status, ErrorResponse{Error: e})
}

// httpStatus is the one place a kind of error becomes an HTTP status
// (REST's answer, and the status JSON-RPC names in an error's data).
func httpStatus(k service.Kind) int {
	switch k {
	case service.KindInvalid:
		return http.StatusBadRequest
	case service.KindUnauthenticated:
		return http.StatusUnauthorized
	case service.KindForbidden:
		return http.StatusForbidden
	case service.KindNotFound:
		return http.StatusNotFound
	case service.KindMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case service.KindConflict:
		return http.StatusConflict
	case service.KindStale:
		return http.StatusPreconditionFailed
	case service.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case service.KindTooMany:
		return http.StatusTooManyRequests
	case service.KindUnavailable:
		return http.StatusServiceUnavailable
	case service.KindStorageFull:
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}
