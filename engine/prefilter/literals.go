package prefilter

import (
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxKeyAlternatives bounds how many alternative keys one rule may have
// before it is treated as having none (and always runs its matcher).
const MaxKeyAlternatives = 64

// maxExactSet bounds the strings an exact set (below) may hold.
const maxExactSet = 16

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

// FoldKey returns the prefilter form of a literal.
func FoldKey(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = foldTable[c]
	}
	return string(b)
}

// ASCIIFoldRisk reports whether some ASCII letter of s has a non-ASCII
// case fold, or s is not plain ASCII; a case-insensitive match of s may
// then use bytes that foldByte does not map to s.
func ASCIIFoldRisk(s string) bool {
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

// Literal is one literal every match of a regexp contains; Fold marks a
// case-insensitive one.
type Literal struct {
	S    string
	Fold bool
}

// requirement is "every match contains one of lits"; ok false means the
// node requires nothing.
type requirement struct {
	lits []Literal
	ok   bool
}

// score ranks requirements: longer shortest literal, then fewer literals.
func (r requirement) score() int {
	if !r.ok {
		return -1
	}
	short := 1 << 20
	for _, l := range r.lits {
		short = min(short, len(l.S))
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
		return requirement{lits: []Literal{{S: s, Fold: re.Flags&syntax.FoldCase != 0}}, ok: true}
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
		all.ok = len(all.lits) > 0 && len(all.lits) <= MaxKeyAlternatives
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
		r.lits = append(r.lits, Literal{S: s, Fold: e.fold})
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

// Required returns literals one of which every match of a simplified
// regexp contains, or ok false when it requires none that can be used.
func Required(re *syntax.Regexp) (lits []Literal, ok bool) {
	req := required(re)
	return req.lits, req.ok
}

// HasNonASCII reports whether s has a byte >= 0x80: a value for which the
// keys and conditions sound only for ASCII do not rule a pattern out.
func HasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}
