package api

import (
	"bytes"
	"io"
	"net/http/httptest"
	"testing"
)

// BenchmarkDecodeEngineCall measures reading an evaluate body at the door:
// the strict JSON decode and the call read once (engine.NewCall).
func BenchmarkDecodeEngineCall(b *testing.B) {
	body := []byte(`{"tool_name":"bash","tool_args":{"command":"curl -H \"Authorization: Bearer abc\" https://example.com/x?token=1"}}`)
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/api/v1/evaluate", nil)
	rd := bytes.NewReader(body)
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(body)
		r.Body = io.NopCloser(rd)
		var in EvaluateRequest
		if _, err := decodeEngineCall(w, r, &in); err != nil {
			b.Fatal(err)
		}
	}
}
