package approval

import (
	"strconv"
	"unicode/utf8"
)

// resolvedArgMax is the longest argument string an answered approval keeps
// in memory, in bytes. An answered ask is kept only to be shown (for a
// while, see Options.Retention) and its full arguments were already
// decided on, so a flood of large asks leaves no large residue.
const resolvedArgMax = 4 << 10

// clipArgs is a copy of args whose strings are cut to n bytes, each cut
// saying how much it left out; args itself is not changed.
func clipArgs(args map[string]any, n int) map[string]any {
	if args == nil {
		return nil
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = clipValue(v, n)
	}
	return out
}

func clipValue(v any, n int) any {
	switch t := v.(type) {
	case string:
		if len(t) <= n {
			return t
		}
		cut := n
		for cut > 0 && !utf8.RuneStart(t[cut]) {
			cut--
		}
		return t[:cut] + "… [" + strconv.Itoa(len(t)-cut) + " more bytes not kept]"
	case map[string]any:
		return clipArgs(t, n)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = clipValue(x, n)
		}
		return out
	}
	return v
}
