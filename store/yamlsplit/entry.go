package yamlsplit

import (
	"bytes"
	"strings"

	"github.com/toolgate/toolgate/internal/strarena"
)

// Simple entries (start time). Most entries of a long rules list
// are written by the store itself or by a generator, one `key: value` to a
// line:
//
//   - id: gen_0
//     tools: [bash, grep]
//     pattern: "re:^git (status|log)\\b"
//     action: allow
//
// simpleEntry reads such an entry without yaml.v3, several times faster,
// and answers exactly what yaml.v3 would decode it to. It takes only a
// small shape, and any entry outside it (a nested mapping, a block list,
// a multi-line or flow mapping value, a tag, an anchor, an escape other
// than \\ and \", a byte outside printable ASCII, a plain scalar that
// might not be a string, a repeated key, ...) goes to yaml.v3 instead:
//
//   - the dash line is `- key: value`, every other line `key: value` at the
//     column of the first key, or blank, or a comment line; a comment is
//     printable ASCII (yaml.v3 refuses control bytes even there);
//   - a key is [A-Za-z_][A-Za-z0-9_]*, at most 64 bytes (YAML's plain keys
//     end within 1,024 characters), followed by ": ";
//   - a value is a double-quoted scalar (escapes \\ and \" only), a
//     single-quoted one (” for '), a plain scalar, or a flow list of
//     such scalars written `[a, b]` or `[]`, with only blanks after it,
//     or blanks and a comment;
//   - a plain scalar starts with a letter or '/', holds printable ASCII
//     but '#', no ": " and no ':' at its end (blanks at its end are not
//     part of it, as in YAML), and is none of
//     yaml.v3's words for true, false and null: so yaml.v3 resolves it to
//     the string it spells (resolve.go: a first byte that is not a sign,
//     digit, '.' or '~' can only be one of those words or a string).
//
// FuzzSimpleEntry holds it to yaml.v3 on generated and mutated entries.
func simpleEntry(lines [][]byte, dashCol int, a *strarena.Arena) (map[string]any, bool) {
	var keys [16][]byte
	var vals [16]any
	n := 0
	for i, l := range lines {
		content, skip, ok := entryLine(bytes.TrimSuffix(l, []byte("\n")), i == 0, dashCol)
		if !ok {
			return nil, false
		}
		if skip {
			continue
		}
		if n == len(keys) {
			return nil, false
		}
		key, rest, ok := simpleKey(content)
		if !ok {
			return nil, false
		}
		for _, k := range keys[:n] {
			if bytes.Equal(k, key) {
				return nil, false // yaml.v3 refuses a repeated key: it says how
			}
		}
		v, ok := simpleValue(rest, a)
		if !ok {
			return nil, false
		}
		keys[n], vals[n] = key, v
		n++
	}
	if n == 0 {
		return nil, false
	}
	m := make(map[string]any, n)
	for i := range n {
		m[a.CopyBytes(keys[i])] = vals[i]
	}
	return m, true
}

// entryLine returns the `key: value` text of an entry's line (its dash
// line when first), skip for a blank or comment line, and ok false for a
// line outside simpleEntry's shape.
func entryLine(l []byte, first bool, dashCol int) (content []byte, skip, ok bool) {
	keyCol := dashCol + 2
	if first {
		if !isEntryDash(l[min(dashCol, len(l)):]) {
			return nil, false, false
		}
		return l[keyCol:], false, true
	}
	switch s := shapeOf(l); {
	case s.bad:
		return nil, false, false
	case s.blank:
		return nil, true, true
	case s.comment:
		// yaml.v3 refuses control bytes, in comments too.
		return nil, true, isPrintableASCII(l[s.indent:])
	case s.indent != keyCol:
		return nil, false, false
	}
	return l[keyCol:], false, true
}

// maxSimpleKey is the longest key simpleEntry reads: YAML allows a plain
// key of at most 1,024 characters (yaml.v3 refuses a longer one), and a
// policy's keys are short.
const maxSimpleKey = 64

// simpleKey splits `key: rest`.
func simpleKey(l []byte) (key, rest []byte, ok bool) {
	i := 0
	for i < len(l) && (l[i] == '_' || isLetter(l[i]) || i > 0 && isDigit(l[i])) {
		i++
	}
	if i == 0 || i > maxSimpleKey || i+2 > len(l) || l[i] != ':' || l[i+1] != ' ' || isYAMLWord(l[:i]) {
		return nil, nil, false
	}
	return l[:i], l[i+2:], true
}

// simpleValue reads a value and checks that only blanks, or blanks and a
// comment, follow it.
func simpleValue(l []byte, a *strarena.Arena) (any, bool) {
	if len(l) == 0 {
		return nil, false
	}
	if l[0] == '[' {
		return simpleFlowList(l, a)
	}
	if l[0] == '"' || l[0] == '\'' {
		s, rest, ok := quoted(l, a)
		if !ok || !isLineEnd(rest) {
			return nil, false
		}
		return s, true
	}
	// A plain scalar ends at " #", and its trailing blanks are not part
	// of it.
	if i := bytes.IndexByte(l, '#'); i >= 0 {
		if i == 0 || l[i-1] != ' ' || !isPrintableASCII(l[i:]) {
			return nil, false
		}
		l = l[:i]
	}
	l = bytes.TrimRight(l, " ")
	if len(l) == 0 || !isPlainBlock(l) {
		return nil, false
	}
	return a.CopyBytes(l), true
}

// isLineEnd reports what may follow a complete value on its line: nothing,
// blanks, or at least one blank and a comment.
func isLineEnd(rest []byte) bool {
	trimmed := bytes.TrimLeft(rest, " ")
	if len(trimmed) == 0 {
		return true
	}
	return trimmed[0] == '#' && len(trimmed) < len(rest) && isPrintableASCII(trimmed)
}

// isPrintableASCII reports bytes from ' ' to '~' only.
func isPrintableASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// simpleFlowList reads `[a, b]` (or `[]`) of quoted and simple plain scalars.
func simpleFlowList(l []byte, a *strarena.Arena) (any, bool) {
	out := []any{}
	l = l[1:]
	for len(l) == 0 || l[0] != ']' { // an item, then ", " or the end
		s, rest, ok := flowItem(l, a)
		if !ok {
			return nil, false
		}
		out = append(out, s)
		var more bool
		if l, more = bytes.CutPrefix(rest, []byte(", ")); !more {
			break
		}
	}
	if len(l) == 0 || l[0] != ']' || !isLineEnd(l[1:]) {
		return nil, false
	}
	return out, true
}

// flowItem reads one item of a flow list: a quoted scalar, or a plain one
// of isFlowPlainByte's bytes that resolves to a string.
func flowItem(l []byte, a *strarena.Arena) (string, []byte, bool) {
	if len(l) > 0 && (l[0] == '"' || l[0] == '\'') {
		return quoted(l, a)
	}
	i := 0
	for i < len(l) && isFlowPlainByte(l[i]) {
		i++
	}
	if i == 0 || !isPlainStart(l[0]) || isYAMLWord(l[:i]) {
		return "", nil, false
	}
	return a.CopyBytes(l[:i]), l[i:], true
}

// quoted reads a single- or double-quoted scalar at the start of l and
// returns its value and what follows the closing quote.
func quoted(l []byte, a *strarena.Arena) (string, []byte, bool) {
	q := l[0]
	escaped := false
	i := 1
	for ; i < len(l); i++ {
		c := l[i]
		if c < 0x20 || c > 0x7e {
			return "", nil, false
		}
		if q == '"' && c == '\\' {
			if i+1 >= len(l) || l[i+1] != '\\' && l[i+1] != '"' {
				return "", nil, false
			}
			escaped = true
			i++
			continue
		}
		if c != q {
			continue
		}
		if q == '\'' && i+1 < len(l) && l[i+1] == '\'' {
			escaped = true
			i++
			continue
		}
		break
	}
	if i >= len(l) {
		return "", nil, false // not closed on this line
	}
	body, rest := l[1:i], l[i+1:]
	if !escaped {
		return a.CopyBytes(body), rest, true
	}
	var b []byte
	for j := 0; j < len(body); j++ {
		if q == '"' && body[j] == '\\' || q == '\'' && body[j] == '\'' {
			j++
		}
		b = append(b, body[j])
	}
	return a.CopyBytes(b), rest, true
}

// isPlainBlock reports a plain scalar (block context, one line) that
// yaml.v3 reads as exactly these bytes and resolves to a string.
func isPlainBlock(l []byte) bool {
	if !isPlainStart(l[0]) || l[len(l)-1] == ':' || isYAMLWord(l) {
		return false
	}
	for i, c := range l {
		if c < 0x20 || c > 0x7e || c == '#' || c == ':' && l[i+1] == ' ' {
			return false
		}
	}
	return true
}

// isPlainStart: a letter or '/' starts a plain scalar that resolve.go
// takes for a string unless it is one of isYAMLWord's.
func isPlainStart(c byte) bool { return isLetter(c) || c == '/' }

func isFlowPlainByte(c byte) bool {
	return isLetter(c) || isDigit(c) || strings.IndexByte("_./*+=@-", c) >= 0
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// isYAMLWord reports the plain scalars starting with a letter that yaml.v3
// resolves to something other than a string (resolve.go's resolveMap).
func isYAMLWord(b []byte) bool {
	switch string(b) {
	case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL":
		return true
	}
	return false
}
