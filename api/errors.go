package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// Error is an API error: an HTTP status, a stable code, a message and
// optional details, written as {"error": {...}} (contract 5).
type Error struct {
	Status  int      `json:"-"`
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Details []Detail `json:"details,omitempty"`
	cause   error
}

// Detail names one problem, by field or place.
type Detail struct {
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func (e *Error) Unwrap() error { return e.cause }

// Codes of the errors the API returns.
const (
	CodeBadRequest         = "bad_request"
	CodeInvalid            = "invalid"
	CodeUnauthorized       = "unauthorized"
	CodeForbidden          = "forbidden"
	CodeNotFound           = "not_found"
	CodeConflict           = "conflict"
	CodePreconditionFailed = "precondition_failed"
	CodeTooLarge           = "too_large"
	CodeInternal           = "internal"
	CodeUnavailable        = "unavailable"
	CodeMethodNotAllowed   = "method_not_allowed"
	CodeStorageFull        = "storage_full"
	CodeStorageReadOnly    = "storage_read_only"
)

func badRequest(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	e := &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: msg}
	if field != "" {
		e.Details = []Detail{{Field: field, Message: msg}}
	}
	return e
}

// errorMappers turn domain errors into API errors; each returns nil when the
// error is not its kind. Other files register theirs in init so that this
// stays the one place errors become responses.
var errorMappers []func(error) *Error

// toAPIError turns any error into an API error.
func toAPIError(err error) *Error {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeTooLarge,
			Message: fmt.Sprintf("request body is larger than %d bytes", maxErr.Limit), cause: err}
	}
	for _, m := range errorMappers {
		if e := m(err); e != nil {
			return e
		}
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error", cause: err}
}

// writeError is the one place errors become HTTP responses.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := toAPIError(err)
	if e.Status >= 500 {
		slog.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, e.Status, map[string]any{"error": e})
}
