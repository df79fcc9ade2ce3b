package store

import "strings"

// compactSection rewrites, in place, every string of a normalized decoded
// section (map keys and values) as a view of an arena's large blocks, and
// returns v. Short strings (keys like "id", values like "bash" or "allow", repeated
// in every rule) are stored once.
//
// Why: yaml.v3 allocates each scalar's string among the garbage
// of its parse (the node tree is about 2.5 KB per rule), so a decoded
// section of 100,000 rules keeps a few live strings in nearly every page
// the parse used, and the runtime cannot return those pages to the OS
// (about 50 MB of resident memory at 100,000 rules). After this the parse
// leaves nothing reachable.
//
// A map's key is replaced by assigning to the equal key, which Go's maps
// do for string keys; the maps and lists themselves stay.
func compactSection(v any) any {
	newArena().rewrite(v)
	return v
}

// maxShared is the longest string compactSection stores once however often
// it occurs; longer ones (ids, patterns) are rarely repeated, and a lookup
// for each would cost more than the bytes.
const maxShared = 16

// rewrite replaces every string of v (keys and values) by the arena's copy.
func (a *arena) rewrite(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok {
				t[a.strString(k)] = a.strString(s)
				continue
			}
			t[a.strString(k)] = e
			a.rewrite(e)
		}
	case []any:
		for i, e := range t {
			if s, ok := e.(string); ok {
				t[i] = a.strString(s)
				continue
			}
			a.rewrite(e)
		}
	}
}

// setKeepingKey sets m[key] = v for a key m holds, keeping the map's own
// key string (compacted) rather than key, which may pin the parser's
// garbage: a Go map stores the key of an assignment.
func setKeepingKey(m map[string]any, key string, v any) {
	for k := range m {
		if k == key {
			m[k] = v
			return
		}
	}
}

// arena hands out strings that are views of large shared blocks (store/yamlsplit
// keeps its own, for the entries it reads without yaml.v3).
type arena struct {
	block strings.Builder
	short map[string]string
}

// arenaBlock is the size of one block of an arena.
const arenaBlock = 64 << 10

func newArena() *arena { return &arena{short: map[string]string{}} }

// strString returns the arena's copy of s.
func (a *arena) strString(s string) string {
	if len(s) <= maxShared {
		if t, ok := a.short[s]; ok {
			return t
		}
	}
	a.reserve(len(s))
	start := a.block.Len()
	a.block.WriteString(s)
	return a.keep(start, len(s))
}

// reserve makes room for n bytes in the current block. A full block is
// replaced by a fresh builder, never grown: strings already handed out
// stay views of the old block, which no one writes again.
func (a *arena) reserve(n int) {
	if a.block.Cap()-a.block.Len() < n {
		a.block = strings.Builder{}
		a.block.Grow(max(arenaBlock, n))
	}
}

// keep returns the n bytes written at start as a string, remembered when
// short.
func (a *arena) keep(start, n int) string {
	s := a.block.String()[start : start+n]
	if n <= maxShared {
		a.short[s] = s
	}
	return s
}
