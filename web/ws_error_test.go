package web

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestWSErrorBody: a refused websocket upgrade answers in the API's error
// shape, byte for byte.
func TestWSErrorBody(t *testing.T) {
	rec := httptest.NewRecorder()
	wsError(rec, http.StatusForbidden, "forbidden_origin", "the Origin <x> is not allowed")
	want := `{"error":{"code":"forbidden_origin","message":"the Origin \u003cx\u003e is not allowed"}}` + "\n"
	if rec.Code != http.StatusForbidden || rec.Body.String() != want || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("got %d %q %q, want 403 %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(), want)
	}
}
