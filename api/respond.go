package api

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/toolgate/toolgate/service"
)

// MaxBodyBytes caps every request body (1 MiB).
const MaxBodyBytes = 1 << 20

// writeJSON writes v as JSON with a status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := stdjson.NewEncoder(w)
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
	// A *bytes.Buffer lets the decoder read data in place, without a copy.
	return decodeStrict(bytes.NewBuffer(data), v)
}

// decodeOptions are how request bodies are decoded (encoding/json/v2
// semantics): member names match exactly, and unknown members, duplicate
// members and invalid UTF-8 are errors. Each of these is a way for two
// parsers to read one body differently, and a caller whose own parser
// reads a call differently from toolgate would run a call other than the
// one decided. encoding/json (v1) matched names case-insensitively, kept
// the last of duplicate members and replaced invalid UTF-8.
var decodeOptions = json.JoinOptions(json.RejectUnknownMembers(true))

// decoders are reused jsontext decoders: a new one allocates its buffer,
// which was a third of what a single evaluate allocated.
var decoders = sync.Pool{New: func() any { return jsontext.NewDecoder(noBody{}) }}

// noBody is what a pooled decoder reads from between uses, so that it does
// not keep the last request's body. It has no state, so decoders in many
// goroutines may share it.
type noBody struct{}

func (noBody) Read([]byte) (int, error) { return 0, io.EOF }

// decodeStrict decodes exactly one JSON value from rd into v under
// decodeOptions; anything after the value but white space is an error.
func decodeStrict(rd io.Reader, v any) error {
	return decodeOne(rd, v, decodeOptions, "a JSON object")
}

// decodeOne decodes exactly one JSON value from rd into v under opts, from
// a pooled decoder; an empty body is refused as lacking what (a JSON
// object, a hook event), and anything after the value but white space is
// an error.
func decodeOne(rd io.Reader, v any, opts json.Options, what string) error {
	dec := decoders.Get().(*jsontext.Decoder)
	dec.Reset(rd, opts)
	defer func() {
		dec.Reset(noBody{})
		decoders.Put(dec)
	}()
	if err := json.UnmarshalDecode(dec, v, opts); err != nil {
		if errors.Is(err, io.EOF) {
			return service.BadRequest("", "request body is empty; %s is required", what)
		}
		return jsonError(err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return service.Classify(err)
		}
		return service.BadRequest("", "request body has data after the JSON value")
	}
	return nil
}

// ambiguityError is nil when data, known to be well-formed JSON, reads one
// way only under decodeOptions; otherwise it names the duplicate member or
// the string that is not UTF-8.
func ambiguityError(data []byte) *service.Error {
	if jsontext.Value(data).IsValid() {
		return nil
	}
	_, err := jsontext.NewDecoder(bytes.NewReader(data)).ReadValue()
	if err == nil {
		return service.BadRequest("", "request body has data after the JSON value")
	}
	return jsonError(err)
}

// jsonError describes a decoding error, naming the field where it can
// (calls[2].tool_args for /calls/2/tool_args).
func jsonError(err error) *service.Error {
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return service.Classify(err)
	}
	var sem *json.SemanticError
	var syn *jsontext.SyntacticError
	switch {
	case errors.As(err, &sem):
		return semanticError(sem)
	case errors.As(err, &syn):
		return syntacticError(syn)
	}
	return service.BadRequest("", "malformed JSON: %v", err)
}

// semanticError is a well-formed body that does not fit the request.
func semanticError(e *json.SemanticError) *service.Error {
	field := fieldPath(e.JSONPointer)
	switch {
	case errors.Is(e.Err, json.ErrUnknownName):
		return service.BadRequest(field, "unknown field %q", field)
	case e.GoType == nil:
		return service.BadRequest(field, "field %q: %v", field, e)
	}
	subject := fmt.Sprintf("field %q", field)
	if field == "" {
		subject = "the request body"
	}
	return service.BadRequest(field, "%s must be %s, not %s", subject, jsonKind(e.GoType.Kind().String()), kindName(e.JSONKind))
}

// syntacticError is a body that is not JSON, or JSON read two ways.
func syntacticError(e *jsontext.SyntacticError) *service.Error {
	field := fieldPath(e.JSONPointer)
	switch {
	case errors.Is(e.Err, io.ErrUnexpectedEOF):
		return service.BadRequest("", "malformed JSON: unexpected end of input")
	case errors.Is(e.Err, jsontext.ErrDuplicateName):
		return service.BadRequest(field, "field %q is given more than once", field)
	}
	return service.BadRequest(field, "malformed JSON at byte %d: %v", e.ByteOffset, e.Err)
}

// fieldPath writes a JSON pointer the way error details name fields:
// /calls/2/tool_args is calls[2].tool_args. A member whose name is all
// digits (a tool argument "0") is written as an index too; the field only
// names the place for a person.
func fieldPath(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if isIndex(tok) {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func isIndex(tok string) bool {
	if tok == "" {
		return false
	}
	for _, c := range tok {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// kindName names a JSON kind as the messages do.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "another value"
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
