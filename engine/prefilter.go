package engine

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/engine/shell"
)

// A prefilter key is a literal that every value a rule matches must contain,
// compared after foldByte (ASCII lower case, \ as /). A rule with several
// keys matches only values that contain at least one of them. Keys are a
// necessary condition only: a candidate rule still runs its matcher, so a
// weak key costs time, never a wrong decision.

// maxKeyAlternatives bounds how many alternative keys one rule may have
// before it is treated as having none (and always runs its matcher).
const maxKeyAlternatives = 64

// maxExactSet bounds the strings an exact set (below) may hold.
const maxExactSet = 16

// ruleKeys are the prefilter keys of one rule.
type ruleKeys struct {
	keys []string
	// asciiOnly is set when a key is sound only for ASCII values: a
	// case-folded literal with a letter that has a non-ASCII fold (k and the
	// Kelvin sign, s and the long s) or with non-ASCII letters. For a value
	// with a byte >= 0x80 such a rule is always a candidate.
	asciiOnly bool
}

// foldTable maps each byte to its prefilter form: A-Z to a-z, \ to /.
var foldTable = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = byte(c + 'a' - 'A')
	}
	t['\\'] = '/'
	return t
}()

// foldKey returns the prefilter form of a literal.
func foldKey(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = foldTable[c]
	}
	return string(b)
}

// asciiFoldRisk reports whether some ASCII letter of s has a non-ASCII
// case fold, or s is not plain ASCII; a case-insensitive match of s may
// then use bytes that foldByte does not map to s.
func asciiFoldRisk(s string) bool {
	for _, r := range s {
		if r >= utf8.RuneSelf {
			return true
		}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				return true
			}
		}
	}
	return false
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
	return ruleKeys{keys: []string{foldKey(best)}}, true
}

// regexKeys unions the keys of every alternative of a re: pattern, from
// the parse trees compileRegex kept (or a new parse once they are dropped).
func regexKeys(m *matcher) (ruleKeys, bool) {
	var rk ruleKeys
	backslashes := true
	for i, expr := range m.re.exprs {
		var parsed *syntax.Regexp
		if i < len(m.re.trees) {
			parsed = m.re.trees[i]
		} else {
			var err error
			if parsed, err = syntax.Parse(expr, syntax.Perl); err != nil {
				return ruleKeys{}, false
			}
		}
		req := required(parsed.Simplify())
		if !req.ok {
			return ruleKeys{}, false
		}
		for _, lit := range req.lits {
			rk.keys = append(rk.keys, foldKey(lit.s))
			rk.asciiOnly = rk.asciiOnly || lit.fold && asciiFoldRisk(lit.s)
			backslashes = backslashes && strings.Contains(lit.s, `\`)
		}
	}
	// A key is looked up with \ folded to /, so a rule that needs a literal
	// backslash is a candidate for every value with a /. It can only match a
	// value that holds a backslash (the value with \ as / has none left), so
	// its matcher skips other values at once.
	m.needsBackslash = backslashes
	rk.keys = dedupe(rk.keys)
	if len(rk.keys) == 0 || len(rk.keys) > maxKeyAlternatives {
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

// literal is one required literal of a regexp and whether it is matched
// case-insensitively.
type literal struct {
	s    string
	fold bool
}

// requirement is "every match contains one of lits"; ok false means the
// node requires nothing.
type requirement struct {
	lits []literal
	ok   bool
}

// score ranks requirements: longer shortest literal, then fewer literals.
func (r requirement) score() int {
	if !r.ok {
		return -1
	}
	short := 1 << 20
	for _, l := range r.lits {
		short = min(short, len(l.s))
	}
	return short*64 - len(r.lits)
}

// required computes a requirement of a simplified regexp: a literal
// requires itself, a concatenation its best part (a run of parts with small
// exact sets counts as one part: n(?:c|cat) requires one of nc, ncat), an
// alternation the union of its branches, x+ what x requires. Anything that
// may match without a literal (large classes, x*, x?, anchors) requires
// nothing.
func required(re *syntax.Regexp) requirement {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		if strings.ContainsRune(s, utf8.RuneError) {
			// U+FFFD also matches an invalid byte of the value.
			return requirement{}
		}
		return requirement{lits: []literal{{s: s, fold: re.Flags&syntax.FoldCase != 0}}, ok: true}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		return requiredConcat(re.Sub)
	case syntax.OpAlternate:
		var all requirement
		for _, sub := range re.Sub {
			r := required(sub)
			if !r.ok {
				return requirement{}
			}
			all.lits = append(all.lits, r.lits...)
		}
		all.ok = len(all.lits) > 0 && len(all.lits) <= maxKeyAlternatives
		return all
	case syntax.OpCharClass:
		if set, ok := exactSet(re); ok {
			return set.requirement()
		}
	}
	return requirement{}
}

// requiredConcat picks the best requirement among the parts of a
// concatenation and the products of its runs of exact parts.
func requiredConcat(subs []*syntax.Regexp) requirement {
	best := requirement{}
	consider := func(r requirement) {
		if r.score() > best.score() {
			best = r
		}
	}
	run := exact{strs: []string{""}}
	flush := func() {
		consider(run.requirement())
		run = exact{strs: []string{""}}
	}
	for _, sub := range subs {
		consider(required(sub))
		set, ok := exactSet(sub)
		if !ok {
			flush()
			continue
		}
		if prod, ok := run.times(set); ok {
			run = prod
		} else {
			flush()
			run = set
		}
	}
	flush()
	return best
}

// exact is the finite set of strings a regexp matches; fold is set when a
// case-folded literal took part.
type exact struct {
	strs []string
	fold bool
}

// requirement turns an exact set into "one of these strings"; a set holding
// the empty string requires nothing.
func (e exact) requirement() requirement {
	r := requirement{ok: len(e.strs) > 0}
	for _, s := range e.strs {
		if s == "" || strings.ContainsRune(s, utf8.RuneError) {
			return requirement{}
		}
		r.lits = append(r.lits, literal{s: s, fold: e.fold})
	}
	return r
}

func (e exact) times(f exact) (exact, bool) {
	if len(e.strs)*len(f.strs) > maxExactSet {
		return exact{}, false
	}
	out := exact{fold: e.fold || f.fold}
	for _, a := range e.strs {
		for _, b := range f.strs {
			out.strs = append(out.strs, a+b)
		}
	}
	return out, true
}

// exactSet computes the exact set of small regexps: literals, small
// classes, captures, alternations, concatenations and x? of such.
func exactSet(re *syntax.Regexp) (exact, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return exact{strs: []string{string(re.Rune)}, fold: re.Flags&syntax.FoldCase != 0}, true
	case syntax.OpEmptyMatch:
		return exact{strs: []string{""}}, true
	case syntax.OpCharClass:
		n := 0
		for i := 0; i < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			if n > maxExactSet/2 {
				return exact{}, false
			}
		}
		var out exact
		for i := 0; i < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				out.strs = append(out.strs, string(r))
			}
		}
		return out, len(out.strs) > 0
	case syntax.OpCapture:
		return exactSet(re.Sub[0])
	case syntax.OpQuest:
		set, ok := exactSet(re.Sub[0])
		if !ok || len(set.strs) >= maxExactSet {
			return exact{}, false
		}
		set.strs = append(set.strs, "")
		return set, true
	case syntax.OpAlternate:
		var out exact
		for _, sub := range re.Sub {
			set, ok := exactSet(sub)
			if !ok || len(out.strs)+len(set.strs) > maxExactSet {
				return exact{}, false
			}
			out.strs = append(out.strs, set.strs...)
			out.fold = out.fold || set.fold
		}
		return out, true
	case syntax.OpConcat:
		out := exact{strs: []string{""}}
		for _, sub := range re.Sub {
			set, ok := exactSet(sub)
			if !ok {
				return exact{}, false
			}
			if out, ok = out.times(set); !ok {
				return exact{}, false
			}
		}
		return out, true
	}
	return exact{}, false
}

// prefilter finds the candidate rules of one tool's scanned rules: those
// whose key occurs in the call's values, those without a key and, for a
// value with non-ASCII bytes, those whose keys are sound only for ASCII.
// Positions are indexes into the tool's scan list, so that candidates in
// ascending position are in file order.
type prefilter struct {
	ac *acMachine
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
func (pf *prefilter) keyRulesOf(k int32) []int32 {
	return pf.keyRules[pf.keyStart[k]:pf.keyStart[k+1]]
}

// newPrefilter indexes rules (one tool's scan list, in file order); keys
// gives each rule's keys.
func newPrefilter(rules []*rule, keys func(*rule) (ruleKeys, bool)) *prefilter {
	pf := &prefilter{rules: int32(len(rules))}
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
		pf.ac = newACMachine(list)
	}
	return pf
}

// candidates appends to buf the positions of the rules that may match the
// call, ascending and without repeats.
func (pf *prefilter) candidates(v *callValues, buf []int32) []int32 {
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
		hits = pf.ac.scan(v.command, hits)
		nonASCII = hasNonASCII(v.command)
	case v.category == CategoryPath:
		root := false
		for _, p := range v.paths {
			hits = pf.ac.scan(p, hits)
			nonASCII = nonASCII || hasNonASCII(p)
			root = root || strings.HasPrefix(p, "/")
		}
		if root && v.pathForms {
			// A shell rule's glob matching a form as a path also tries
			// the root parent as "//", which no form holds.
			hits = pf.ac.scan("//", hits)
		}
	}
	return pf.merge(buf, hits, nonASCII)
}

// merge appends to buf the rules that are always candidates, the ASCII-only
// ones for a value with non-ASCII bytes, and the rules of the keys found
// (hits), ascending and without repeats.
func (pf *prefilter) merge(buf, hits []int32, nonASCII bool) []int32 {
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

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}
