package engine

import (
	"slices"
	"strings"

	"github.com/toolgate/toolgate/engine/prefilter"
	"github.com/toolgate/toolgate/engine/shell"
)

// A prefilter key is a literal that every value a rule matches must contain,
// compared after foldByte (ASCII lower case, \ as /). A rule with several
// keys matches only values that contain at least one of them. Keys are a
// necessary condition only: a candidate rule still runs its matcher, so a
// weak key costs time, never a wrong decision.

// ruleKeys are the prefilter keys of one rule.
type ruleKeys struct {
	keys []string
	// asciiOnly is set when a key is sound only for ASCII values: a
	// case-folded literal with a letter that has a non-ASCII fold (k and the
	// Kelvin sign, s and the long s) or with non-ASCII letters. For a value
	// with a byte >= 0x80 such a rule is always a candidate.
	asciiOnly bool
}

// keysOf computes the prefilter keys of a rule's matcher for its category;
// ok is false when the rule has no usable key and must always run.
func keysOf(m *matcher, cat Category) (rk ruleKeys, ok bool) {
	if m.isRegex {
		return regexKeys(m)
	}
	return globKeys(m, cat)
}

// globKeys picks the longest literal run of a glob (between * and ?) as its
// key; an exact pattern is its own key. A path glob may match the value's
// parent "/" as "//", which the value need not contain, so a key holding
// "//" is not used for path rules.
func globKeys(m *matcher, cat Category) (ruleKeys, bool) {
	p := m.exact
	if m.hasWild {
		p = strings.ReplaceAll(m.raw, `\`, "/")
		p = strings.TrimSuffix(p, " *")
	}
	best := ""
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '*' || r == '?' }) {
		if len(part) > len(best) {
			best = part
		}
	}
	if best == "" || cat == CategoryPath && strings.Contains(best, "//") {
		return ruleKeys{}, false
	}
	return ruleKeys{keys: []string{prefilter.FoldKey(best)}}, true
}

// regexKeys unions the keys of every alternative of a re: pattern, from
// the parse trees compileRegex kept (or a new parse once they are dropped).
func regexKeys(m *matcher) (ruleKeys, bool) {
	var rk ruleKeys
	backslashes := true
	for i := range m.re.exprs {
		parsed, ok := m.re.tree(i)
		if !ok {
			return ruleKeys{}, false
		}
		lits, ok := prefilter.Required(parsed.Simplify())
		if !ok {
			return ruleKeys{}, false
		}
		for _, lit := range lits {
			rk.keys = append(rk.keys, prefilter.FoldKey(lit.S))
			rk.asciiOnly = rk.asciiOnly || lit.Fold && prefilter.ASCIIFoldRisk(lit.S)
			backslashes = backslashes && strings.Contains(lit.S, `\`)
		}
	}
	// A key is looked up with \ folded to /, so a rule that needs a literal
	// backslash is a candidate for every value with a /. It can only match a
	// value that holds a backslash (the value with \ as / has none left), so
	// its matcher skips other values at once.
	m.needsBackslash = backslashes
	rk.keys = dedupe(rk.keys)
	if len(rk.keys) == 0 || len(rk.keys) > prefilter.MaxKeyAlternatives {
		return ruleKeys{}, false
	}
	return rk, true
}

func dedupe(keys []string) []string {
	seen := make(map[string]bool, len(keys))
	out := keys[:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// ruleFilter finds the candidate rules of one tool's scanned rules: those
// whose key occurs in the call's values, those without a key and, for a
// value with non-ASCII bytes, those whose keys are sound only for ASCII.
// Positions are indexes into the tool's scan list, so that candidates in
// ascending position are in file order.
type ruleFilter struct {
	ac *prefilter.Machine
	// keyRules[keyStart[k]:keyStart[k+1]] are the positions of key id k,
	// ascending: one flat array instead of a slice per key.
	keyStart  []int32
	keyRules  []int32
	always    []int32
	asciiOnly []int32
	// rules is the length of the scan list: a value with unread input
	// makes every rule a candidate (unreadInput).
	rules int32
}

// keyRulesOf returns the positions of the rules with key id k.
func (pf *ruleFilter) keyRulesOf(k int32) []int32 {
	return pf.keyRules[pf.keyStart[k]:pf.keyStart[k+1]]
}

// newPrefilter indexes rules (one tool's scan list, in file order); keys
// gives each rule's keys.
func newPrefilter(rules []*rule, keys func(*rule) (ruleKeys, bool)) *ruleFilter {
	pf := &ruleFilter{rules: int32(len(rules))}
	ids := make(map[string]int32, len(rules))
	list := make([]string, 0, len(rules))
	// (key id, position) pairs in position order; counted per key, then
	// laid out flat.
	type keyPos struct{ id, pos int32 }
	pairs := make([]keyPos, 0, len(rules))
	var count, last []int32
	for pos, r := range rules {
		rk, ok := keys(r)
		if !ok {
			pf.always = append(pf.always, int32(pos))
			continue
		}
		if rk.asciiOnly {
			pf.asciiOnly = append(pf.asciiOnly, int32(pos))
		}
		for _, k := range rk.keys {
			id, seen := ids[k]
			if !seen {
				id = int32(len(list))
				ids[k] = id
				list = append(list, k)
				count = append(count, 0)
				last = append(last, -1)
			}
			if last[id] == int32(pos) {
				continue // the rule lists this key twice
			}
			last[id] = int32(pos)
			pairs = append(pairs, keyPos{id, int32(pos)})
			count[id]++
		}
	}
	pf.keyStart = make([]int32, len(list)+1)
	for id, n := range count {
		pf.keyStart[id+1] = pf.keyStart[id] + n
	}
	pf.keyRules = make([]int32, len(pairs))
	next := append([]int32(nil), pf.keyStart[:len(list)]...)
	for _, p := range pairs {
		pf.keyRules[next[p.id]] = p.pos
		next[p.id]++
	}
	if len(list) > 0 {
		pf.ac = prefilter.NewMachine(list)
	}
	return pf
}

// candidates appends to buf the positions of the rules that may match the
// call, ascending and without repeats.
func (pf *ruleFilter) candidates(v *callValues, buf []int32) []int32 {
	if unreadInput(v) {
		for pos := range pf.rules {
			buf = append(buf, pos)
		}
		return buf
	}
	var kb [32]int32
	hits := kb[:0]
	nonASCII := false
	switch {
	case v.category != CategoryShell && v.category != CategoryPath:
		return buf
	case pf.ac == nil: // no rule has a key: all are always candidates
	case v.category == CategoryShell:
		hits = pf.ac.Scan(v.command, hits)
		nonASCII = prefilter.HasNonASCII(v.command)
	case v.category == CategoryPath:
		root := false
		for _, p := range v.paths {
			hits = pf.ac.Scan(p, hits)
			nonASCII = nonASCII || prefilter.HasNonASCII(p)
			root = root || strings.HasPrefix(p, "/")
		}
		if root && v.pathForms {
			// A shell rule's glob matching a form as a path also tries
			// the root parent as "//", which no form holds.
			hits = pf.ac.Scan("//", hits)
		}
	}
	return pf.merge(buf, hits, nonASCII)
}

// merge appends to buf the rules that are always candidates, the ASCII-only
// ones for a value with non-ASCII bytes, and the rules of the keys found
// (hits), ascending and without repeats.
func (pf *ruleFilter) merge(buf, hits []int32, nonASCII bool) []int32 {
	start := len(buf)
	sources := 0
	if len(pf.always) > 0 {
		buf = append(buf, pf.always...)
		sources++
	}
	if nonASCII && len(pf.asciiOnly) > 0 {
		buf = append(buf, pf.asciiOnly...)
		sources++
	}
	for _, k := range hits {
		buf = append(buf, pf.keyRulesOf(k)...)
		sources++
	}
	if sources > 1 {
		slices.Sort(buf[start:])
		buf = buf[:start+len(slices.Compact(buf[start:]))]
	}
	return buf
}

// unreadInput reports whether a value of the call holds unread input
// (shell.InputMark): a strict glob lets it stand for any text
// (docs/decisions.md#unread-input), which no key can rule out.
func unreadInput(v *callValues) bool {
	if v.category == CategoryShell {
		return strings.IndexByte(v.command, shell.InputByte) >= 0
	}
	for _, p := range v.paths {
		if strings.IndexByte(p, shell.InputByte) >= 0 {
			return true
		}
	}
	return false
}
