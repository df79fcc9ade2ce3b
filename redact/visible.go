package redact

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible makes every character that would hide or reorder text on a
// person's screen visible as <U+XXXX>: bidirectional controls (U+202A-202E,
// U+2066-2069, U+200E-200F, U+061C: the Trojan Source trick that makes
// `; curl | sh` read as a comment), zero-width and other format characters
// (category Cf: U+200B-200D, U+2060, U+FEFF, tags U+E0000-E007F, ...),
// control characters but tab and newline (category Cc), line and paragraph
// separators, variation selectors and the blank letters (Hangul fillers,
// U+3164, U+FFA0, the braille blank U+2800). Every string an agent wrote
// that a person reads goes through it (docs/decisions.md#what-a-person-sees).
func Visible(s string) string {
	if !HasInvisible(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if invisible(r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// HasInvisible reports whether Visible would change s.
func HasInvisible(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return true // not UTF-8: shown as U+FFFD, which hides the byte
		}
		if invisible(r) {
			return true
		}
		i += n
	}
	return false
}

// invisible is one character Visible marks.
func invisible(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r == utf8.RuneError:
		return true
	case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r),
		unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r),
		unicode.Is(unicode.Variation_Selector, r):
		return true
	}
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x034F, 0x180E:
		return true
	}
	return false
}

// Shown is a string as a person is shown it: secrets masked, then every
// hiding character made visible.
func Shown(s string) string { return Visible(Text(s)) }

// ShownArgs is tool arguments as a person is shown them: secrets masked
// (Args) and every string made visible, keys included.
func ShownArgs(args map[string]any) map[string]any {
	return visibleValue(Args(args)).(map[string]any)
}

func visibleValue(v any) any {
	switch t := v.(type) {
	case string:
		return Visible(t)
	case map[string]any:
		return copyObject(t, Visible, visibleValue)
	case []any:
		return copyList(t, visibleValue)
	}
	return v
}

// ClipArgs cuts every string of shown arguments longer than n bytes,
// saying how much it left out.
func ClipArgs(args map[string]any, n int) map[string]any {
	return clipValue(args, n).(map[string]any)
}

func clipValue(v any, n int) any {
	clip := func(x any) any { return clipValue(x, n) }
	switch t := v.(type) {
	case string:
		return truncate(t, n)
	case map[string]any:
		return copyObject(t, nil, clip)
	case []any:
		return copyList(t, clip)
	}
	return v
}

// Clip cuts s to about n bytes, saying how much it left out.
func Clip(s string, n int) string { return truncate(s, n) }
