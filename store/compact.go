package store

import "github.com/toolgate/toolgate/internal/strarena"

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
	rewrite(strarena.New(), v)
	return v
}

// rewrite replaces every string of v (keys and values) by a's copy.
func rewrite(a *strarena.Arena, v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok {
				t[a.Copy(k)] = a.Copy(s)
				continue
			}
			t[a.Copy(k)] = e
			rewrite(a, e)
		}
	case []any:
		for i, e := range t {
			if s, ok := e.(string); ok {
				t[i] = a.Copy(s)
				continue
			}
			rewrite(a, e)
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
