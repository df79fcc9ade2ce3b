package store

import "strings"

// compactSection rewrites, in place, every string of a normalized decoded
// section (map keys and values) as a substring of one string that holds
// each distinct string once, and returns v.
//
// Why (issue 17): yaml.v3 allocates each scalar's string among the garbage
// of its parse (the node tree is about 2.5 KB per rule), so a decoded
// section of 100,000 rules keeps a few live strings in nearly every page
// the parse used, and the runtime cannot return those pages to the OS
// (about 50 MB of resident memory at 100,000 rules). After this the parse
// leaves nothing reachable. Keys like "id" and values like "bash" or
// "allow", repeated in every rule, are also stored once.
//
// A map's key is replaced by assigning to the equal key, which Go's maps
// do for string keys; the maps and lists themselves stay.
func compactSection(v any) any {
	c := compactor{at: map[string]int{}}
	c.collect(v)
	c.all = c.b.String()
	c.rewrite(v)
	return v
}

// compactor is one compactSection: the distinct strings written to b, at
// their offsets.
type compactor struct {
	b   strings.Builder
	at  map[string]int
	all string
}

func (c *compactor) add(s string) {
	if _, ok := c.at[s]; !ok {
		c.at[s] = c.b.Len()
		c.b.WriteString(s)
	}
}

func (c *compactor) collect(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			c.add(k)
			c.collect(e)
		}
	case []any:
		for _, e := range t {
			c.collect(e)
		}
	case string:
		c.add(t)
	}
}

func (c *compactor) str(s string) string {
	o := c.at[s]
	return c.all[o : o+len(s)]
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
