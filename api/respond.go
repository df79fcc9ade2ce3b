package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
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

// decodeJSON reads a JSON object body into v, refusing unknown fields,
// trailing data and bodies over MaxBodyBytes.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	data, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	return decodeBytes(data, v)
}

// decodeBytes decodes one JSON value strictly.
func decodeBytes(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return badRequest("", "request body is empty; a JSON object is required")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return badRequest("", "request body has data after the JSON value")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
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
