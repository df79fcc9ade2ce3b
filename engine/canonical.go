package engine

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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
		return appendJSONString(b, t), true
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
			b = appendJSONString(b, x)
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
		b = appendJSONString(b, k)
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

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string as encoding/json does with
// HTML escaping off: " and \ escaped, control characters as \b \f \n \r
// \t or \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
