package api

import (
	"testing"

	"github.com/toolgate/toolgate/service"
)

// TestHTTPStatus: each kind of error answers its HTTP status, and only an
// internal error (or a kind this switch does not know) answers 500.
func TestHTTPStatus(t *testing.T) {
	cases := []struct {
		note   string
		kind   service.Kind
		status int
	}{
		{note: "internal", kind: service.KindInternal, status: 500},
		{note: "invalid", kind: service.KindInvalid, status: 400},
		{note: "unauthenticated", kind: service.KindUnauthenticated, status: 401},
		{note: "forbidden", kind: service.KindForbidden, status: 403},
		{note: "not found", kind: service.KindNotFound, status: 404},
		{note: "method not allowed", kind: service.KindMethodNotAllowed, status: 405},
		{note: "conflict", kind: service.KindConflict, status: 409},
		{note: "stale If-Match", kind: service.KindStale, status: 412},
		{note: "too large", kind: service.KindTooLarge, status: 413},
		{note: "too many", kind: service.KindTooMany, status: 429},
		{note: "unavailable", kind: service.KindUnavailable, status: 503},
		{note: "storage full", kind: service.KindStorageFull, status: 507},
		{note: "a kind added without a status", kind: service.KindStorageFull + 1, status: 500},
	}
	for _, c := range cases {
		if got := httpStatus(c.kind); got != c.status {
			t.Errorf("%s: got %d, want %d", c.note, got, c.status)
		}
	}
}
