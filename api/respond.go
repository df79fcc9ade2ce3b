package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// MaxBodyBytes caps every request body (1 MiB).
const MaxBodyBytes = 1 << 20

// writeJSON writes v as JSON with a status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// decodeJSON decodes a JSON object body into v, refusing unknown fields,
// trailing data and bodies over MaxBodyBytes. It decodes straight from the
// (capped) body rather than reading it into a buffer first.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	return decodeStrict(http.MaxBytesReader(w, r.Body, MaxBodyBytes), v)
}

// bodyBufs are the buffers of readBody.
var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readBody reads the whole (capped) body into a pooled buffer; give it back
// with releaseBody once nothing refers to its bytes.
func readBody(w http.ResponseWriter, r *http.Request) (*bytes.Buffer, error) {
	buf := bodyBufs.Get().(*bytes.Buffer)
	buf.Reset()
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, MaxBodyBytes)); err != nil {
		releaseBody(buf)
		return nil, err
	}
	return buf, nil
}

// releaseBody returns a buffer of readBody to the pool.
func releaseBody(buf *bytes.Buffer) {
	if buf.Cap() <= 2*MaxBodyBytes {
		bodyBufs.Put(buf)
	}
}

// decodeBytes decodes one JSON value strictly.
func decodeBytes(data []byte, v any) error {
	return decodeStrict(bytes.NewReader(data), v)
}

// decodeStrict decodes exactly one JSON value from rd into v: unknown fields
// and anything after the value but white space are errors.
func decodeStrict(rd io.Reader, v any) error {
	dec := json.NewDecoder(rd)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return badRequest("", "request body is empty; a JSON object is required")
		}
		return jsonError(err)
	}
	if dec.More() {
		return badRequest("", "request body has data after the JSON value")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return toAPIError(err)
		}
		return badRequest("", "request body has data after the JSON value")
	}
	return nil
}

// jsonError describes a decoding error, naming the field where it can.
func jsonError(err error) *Error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return badRequest("", "malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		field := typ.Field
		return badRequest(field, "field %q must be %s, not %s", field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return badRequest(name, "unknown field %q", name)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("", "malformed JSON: unexpected end of input")
	}
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return toAPIError(err)
	}
	return badRequest("", "malformed JSON: %v", err)
}

func jsonKind(k string) string {
	switch k {
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "interface":
		return "a value"
	}
	if strings.HasPrefix(k, "int") || strings.HasPrefix(k, "uint") || strings.HasPrefix(k, "float") {
		return "a number"
	}
	return fmt.Sprintf("a %s", k)
}
