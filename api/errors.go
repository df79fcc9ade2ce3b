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
// (REST's answer, and the status JSON-RPC names in an error's data); a
// kind not in kindStatus is an internal error.
func httpStatus(k service.Kind) int {
	if status, ok := kindStatus[k]; ok {
		return status
	}
	return http.StatusInternalServerError
}

// kindStatus is the HTTP status of each kind of error.
var kindStatus = map[service.Kind]int{
	service.KindInvalid:          http.StatusBadRequest,
	service.KindUnauthenticated:  http.StatusUnauthorized,
	service.KindForbidden:        http.StatusForbidden,
	service.KindNotFound:         http.StatusNotFound,
	service.KindMethodNotAllowed: http.StatusMethodNotAllowed,
	service.KindConflict:         http.StatusConflict,
	service.KindStale:            http.StatusPreconditionFailed,
	service.KindTooLarge:         http.StatusRequestEntityTooLarge,
	service.KindTooMany:          http.StatusTooManyRequests,
	service.KindUnavailable:      http.StatusServiceUnavailable,
	service.KindStorageFull:      http.StatusInsufficientStorage,
}
