package mcpgate

import (
	"bytes"
	"encoding/json"
)

// peekID finds the raw value of the top-level "id" member of a JSON
// object (nil when it has none or it is null) by skipping over every
// other member's value without reading it, which costs a fraction of
// decoding the message. sure is false when the message is not plainly
// such an object (a batch, a member name written with an escape, which
// could spell "id", or anything the skip does not follow): the caller
// then decodes it. Of a name written twice the last counts, as in
// readMessage.
func peekID(line []byte) (id []byte, sure bool) {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return nil, false
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return nil, true
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return nil, false
		}
		end := stringEnd(line, i)
		if end < 0 {
			return nil, false
		}
		name := line[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			return nil, false
		}
		i = skipSpace(line, end)
		if i >= len(line) || line[i] != ':' {
			return nil, false
		}
		start := skipSpace(line, i+1)
		end = valueEnd(line, start)
		if end < 0 {
			return nil, false
		}
		if string(name) == "id" {
			id = line[start:end]
			if string(id) == "null" {
				id = nil
			}
		}
		i = skipSpace(line, end)
		switch {
		case i >= len(line):
			return nil, false
		case line[i] == '}':
			if len(bytes.TrimSpace(line[i+1:])) != 0 {
				return nil, false
			}
			return id, true
		case line[i] != ',':
			return nil, false
		}
		i = skipSpace(line, i+1)
	}
}

// skipSpace returns the index of the first byte from i that is not JSON
// white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the JSON string starting at b[i]
// (a quote), or -1.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		// A quote after an odd run of backslashes is escaped.
		n := 0
		for j-1-n > i && b[j-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
	}
	return -1
}

// valueEnd returns the index just past the JSON value starting at b[i],
// or -1. Objects and arrays are skipped by their brackets, past strings.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); {
			switch b[j] {
			case '"':
				if j = stringEnd(b, j); j < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// canonicalID is one spelling of a request id for every way JSON may
// write it: a string's escapes ("\u0031" is "1") and a number's form (1.0
// is 1) are undone, as the client's JSON parser undoes them when it
// matches an answer to its request.
func canonicalID(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	switch v.(type) {
	case string, float64:
		if out, err := json.Marshal(v); err == nil {
			return string(out)
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}
