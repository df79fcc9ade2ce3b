package engine

import (
	"math/bits"
	"regexp"
	"strings"
)

// globTok is one element of a compiled glob: a literal byte, ? (one class
// character) or * (any run of class characters).
type globTok struct {
	kind byte
	c    byte
}

const (
	tokLit byte = iota
	tokOne
	tokStar
)

// maxGlobStates is how many tokens a glob may have to run as a bit-parallel
// automaton (one state per token boundary in a uint64); longer globs fall
// back to a regexp.
const maxGlobStates = 63

// globProgram is a compiled glob (contract 3): anchored at both ends, with
// * and ? limited to globClass, and a trailing " *" that also matches
// nothing. It runs as a small NFA whose states are the token boundaries,
// kept in one uint64: no allocation, linear in the value, and cheap to
// compile, which matters for policies of 100,000 rules.
type globProgram struct {
	toks   []globTok
	accept uint64
	re     *regexp.Regexp // only for globs longer than maxGlobStates
}

// classTable marks the bytes of globClass: [-a-zA-Z0-9 ._/:"'].
var classTable = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "- ._/:\"'" {
		t[c] = true
	}
	return t
}()

// newGlobProgram compiles a glob whose \ are already /.
func newGlobProgram(p string) *globProgram {
	body, optionalTail := p, false
	if strings.HasSuffix(p, " *") {
		body, optionalTail = p[:len(p)-2], true
	}
	g := &globProgram{}
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '*':
			g.toks = append(g.toks, globTok{kind: tokStar})
		case '?':
			g.toks = append(g.toks, globTok{kind: tokOne})
		default:
			g.toks = append(g.toks, globTok{kind: tokLit, c: body[i]})
		}
	}
	bodyEnd := len(g.toks)
	if optionalTail {
		g.toks = append(g.toks, globTok{kind: tokLit, c: ' '}, globTok{kind: tokStar})
	}
	if len(g.toks) > maxGlobStates {
		g.re = globRegexp(body, optionalTail)
		return g
	}
	g.accept = 1 << uint(bodyEnd)
	if optionalTail {
		g.accept |= 1 << uint(len(g.toks))
	}
	return g
}

// globRegexp is the regexp form of a glob, for very long globs.
func globRegexp(body string, optionalTail bool) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range body {
		switch r {
		case '*':
			b.WriteString(globClass + "*")
		case '?':
			b.WriteString(globClass)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	if optionalTail {
		b.WriteString("(?: " + globClass + "*)?")
	}
	b.WriteString(`\z`)
	return regexp.MustCompile(b.String())
}

// closure adds, for every state before a *, the state after it (a * may
// match nothing). Ascending order handles runs of stars.
func (g *globProgram) closure(set uint64) uint64 {
	for i, t := range g.toks {
		if t.kind == tokStar && set&(1<<uint(i)) != 0 {
			set |= 1 << uint(i+1)
		}
	}
	return set
}

// step advances the state set over one byte.
func (g *globProgram) step(set uint64, c byte) uint64 {
	var next uint64
	for rest := set; rest != 0; rest &= rest - 1 {
		i := bits.TrailingZeros64(rest)
		if i >= len(g.toks) {
			continue
		}
		switch t := g.toks[i]; t.kind {
		case tokLit:
			if c == t.c {
				next |= 1 << uint(i+1)
			}
		case tokOne:
			if classTable[c] {
				next |= 1 << uint(i+1)
			}
		case tokStar:
			if classTable[c] {
				next |= 1 << uint(i)
			}
		}
	}
	return g.closure(next)
}

// match reports whether the glob matches all of v (followed by a / when
// slash is set, so a parent p can be tried as p/ without building it).
func (g *globProgram) match(v string, slash bool) bool {
	if g.re != nil {
		if slash {
			return g.re.MatchString(v + "/")
		}
		return g.re.MatchString(v)
	}
	set := g.closure(1)
	for i := 0; i < len(v) && set != 0; i++ {
		set = g.step(set, v[i])
	}
	if slash && set != 0 {
		set = g.step(set, '/')
	}
	return set&g.accept != 0
}
