package engine

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/jsontext"
)

// appendCanonical appends v as canonical JSON (CanonicalArgs) without
// reflection: the values a JSON request decodes to (objects, arrays,
// strings, float64 numbers, booleans, null) and []string. ok is false for
// any other value, or a number JSON cannot write (NaN, an infinity): the
// caller then uses encoding/json, which reports those. Every byte is
// what encoding/json writes with HTML escaping off (canonical_test.go
// compares them).
func appendCanonical(b []byte, v any) ([]byte, bool) {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, t), true
	case string:
		return jsontext.AppendString(b, t), true
	case float64:
		return appendJSONFloat(b, t)
	case map[string]any:
		return appendCanonicalObject(b, t)
	case []any:
		b = append(b, '[')
		for i, x := range t {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendCanonical(b, x); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case []string:
		if t == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, x := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsontext.AppendString(b, x)
		}
		return append(b, ']'), true
	}
	return b, false
}

// appendCanonicalObject appends an object with its keys sorted.
func appendCanonicalObject(b []byte, m map[string]any) ([]byte, bool) {
	var kb [16]string
	keys := kb[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, strings.Compare)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsontext.AppendString(b, k)
		b = append(b, ':')
		var ok bool
		if b, ok = appendCanonical(b, m[k]); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// appendJSONFloat writes a float64 as encoding/json does: the shortest
// form, with an exponent below 1e-6 and from 1e21, e-07 written e-7.
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}
