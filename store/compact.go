package store

import "strings"

// compactSection rewrites, in place, every string of a normalized decoded
// section (map keys and values) as a substring of one string, and returns
// v. Short strings (keys like "id", values like "bash" or "allow", repeated
// in every rule) are stored once.
//
// Why (issue 17): yaml.v3 allocates each scalar's string among the garbage
// of its parse (the node tree is about 2.5 KB per rule), so a decoded
// section of 100,000 rules keeps a few live strings in nearly every page
// the parse used, and the runtime cannot return those pages to the OS
// (about 50 MB of resident memory at 100,000 rules). After this the parse
// leaves nothing reachable.
//
// A map's key is replaced by assigning to the equal key, which Go's maps
// do for string keys; the maps and lists themselves stay.
func compactSection(v any) any {
	c := compactor{short: map[string]string{}}
	c.b.Grow(textSize(v))
	c.rewrite(v)
	return v
}

// maxShared is the longest string compactSection stores once however often
// it occurs; longer ones (ids, patterns) are rarely repeated, and a lookup
// for each would cost more than the bytes.
const maxShared = 16

// textSize is the length of every string of v, keys included.
func textSize(v any) int {
	n := 0
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			n += len(k) + textSize(e)
		}
	case []any:
		for _, e := range t {
			n += textSize(e)
		}
	case string:
		n = len(t)
	}
	return n
}

// compactor is one compactSection. b was grown to the section's text size
// first, so it never reallocates: every string taken from b.String() stays
// a view of the same array, which strings.Builder never writes over.
type compactor struct {
	b     strings.Builder
	short map[string]string
}

func (c *compactor) str(s string) string {
	if len(s) <= maxShared {
		if t, ok := c.short[s]; ok {
			return t
		}
	}
	start := c.b.Len()
	c.b.WriteString(s)
	t := c.b.String()[start:]
	if len(s) <= maxShared {
		c.short[s] = t
	}
	return t
}

func (c *compactor) rewrite(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok {
				t[c.str(k)] = c.str(s)
				continue
			}
			t[c.str(k)] = e
			c.rewrite(e)
		}
	case []any:
		for i, e := range t {
			if s, ok := e.(string); ok {
				t[i] = c.str(s)
				continue
			}
			c.rewrite(e)
		}
	}
}
