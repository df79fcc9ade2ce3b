package shell

import (
	"strconv"
	"strings"
)

// bindPositional is a `sh -c SCRIPT ARG0 ARG1...` script with its
// positional parameters bound as the shell binds them: $0 is ARG0, $1...
// the rest, $@ and $* all of them but $0 (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
// The script is read both as written and bound, so that
// `sh -c '"$0" push origin main' git` is also read as `git push origin
// main`. Each value is single-quoted, so it stays one word. It reports
// false when the script names no positional parameter or no value follows.
func bindPositional(script string, args []string) (string, bool) {
	if len(args) == 0 || !strings.Contains(script, "$") {
		return "", false
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	all := strings.Join(quoted[1:], " ")
	var b strings.Builder
	bound := false
	for i := 0; i < len(script); i++ {
		c := script[i]
		if c != '$' || i+1 >= len(script) {
			b.WriteByte(c)
			continue
		}
		name, width := positionalName(script[i+1:])
		if width == 0 {
			b.WriteByte(c)
			continue
		}
		bound = true
		switch name {
		case "@", "*":
			b.WriteString(all)
		default:
			n, _ := strconv.Atoi(name)
			if n < len(quoted) {
				b.WriteString(quoted[n])
			} else {
				b.WriteString("''")
			}
		}
		i += width
	}
	if !bound {
		return "", false
	}
	// "$@" written in double quotes: the quotes around the bound words
	// would join them into one; drop them.
	text := strings.NewReplacer(`"`+all+`"`, all).Replace(b.String())
	for _, q := range quoted {
		text = strings.ReplaceAll(text, `"`+q+`"`, q)
	}
	return text, true
}

// positionalName reads a positional parameter after a $: a digit, @ or *,
// or the same in braces. It returns the name and how many bytes it took.
func positionalName(s string) (string, int) {
	if s == "" {
		return "", 0
	}
	if c := s[0]; c >= '0' && c <= '9' || c == '@' || c == '*' {
		return s[:1], 1
	}
	if s[0] == '{' {
		end := strings.IndexByte(s, '}')
		if end > 1 {
			name := s[1:end]
			if name == "@" || name == "*" {
				return name, end + 1
			}
			if _, err := strconv.Atoi(name); err == nil {
				return name, end + 1
			}
		}
	}
	return "", 0
}
