package glob

import (
	"math/bits"
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
	"github.com/toolgate/toolgate/internal/ascii"
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

// Program is a compiled glob (docs/decisions.md): anchored at both ends, with
// * and ? limited to the class of classTable, and a trailing " *" that also
// matches nothing. It runs as an NFA whose states are the token boundaries, kept as
// a bit set (one uint64 for globs of up to 63 tokens, the common case, which
// then costs no allocation): linear in the value, whatever the pattern, and
// cheap to compile, which matters for policies of 100,000 rules.
type Program struct {
	toks  []globTok
	final []uint64 // accepting states; its length is the words of every state set
	// anyChar lets * and ? match any byte in a strict match: set for deny
	// and ask rules, whose globs must not be slipped past with a character
	// outside the class (git push origin +main;
	// docs/decisions.md#deny-globs-match-any-character).
	anyChar bool
	// literal is the glob's text before an optional trailing " *" when it
	// holds no other * or ?: a prefix rule (git push *), the common form,
	// which match then decides without running the NFA.
	literal     string
	isLiteral   bool
	literalTail bool
}

// classTable marks the bytes a glob * or ? may match (docs/decisions.md):
// [-a-zA-Z0-9 ._/:"'], never ; & | $ \ ` < > ( ) or a newline.
var classTable = ascii.AlnumAnd("- ._/:\"'")

// Compile compiles a glob whose \ are already /.
func Compile(p string) *Program {
	body, optionalTail := p, false
	if strings.HasSuffix(p, " *") {
		body, optionalTail = p[:len(p)-2], true
	}
	// Sized once: a policy of 100,000 rules keeps 100,000 of these.
	n := len(body)
	if optionalTail {
		n += 2
	}
	g := &Program{toks: make([]globTok, 0, n)}
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
	g.literal, g.literalTail = body, optionalTail
	g.isLiteral = !strings.ContainsAny(body, "*?")
	g.final = make([]uint64, (len(g.toks)+1+63)/64)
	setBit(g.final, bodyEnd)
	if optionalTail {
		setBit(g.final, len(g.toks))
	}
	return g
}

// StrictAnyChar lets * and ? match any byte in a strict match, as deny and
// ask rules need (docs/decisions.md#deny-globs-match-any-character). Call
// it before the Program is shared.
func (g *Program) StrictAnyChar() { g.anyChar = true }

func setBit(set []uint64, i int)      { set[i/64] |= 1 << uint(i%64) }
func hasBit(set []uint64, i int) bool { return set[i/64]&(1<<uint(i%64)) != 0 }

func anyBit(set []uint64) bool {
	for _, w := range set {
		if w != 0 {
			return true
		}
	}
	return false
}

func intersects(a, b []uint64) bool {
	for i := range a {
		if a[i]&b[i] != 0 {
			return true
		}
	}
	return false
}

// closure adds, for every state before a *, the state after it (a * may
// match nothing). Ascending order handles runs of stars.
func (g *Program) closure(set []uint64) {
	for i, t := range g.toks {
		if t.kind == tokStar && hasBit(set, i) {
			setBit(set, i+1)
		}
	}
}

// step advances the state set cur over one byte into next (cleared first);
// any lets * and ? match any byte.
func (g *Program) step(cur, next []uint64, c byte, any bool) {
	inClass := classTable[c] || any
	clear(next)
	for w, word := range cur {
		for rest := word; rest != 0; rest &= rest - 1 {
			i := w*64 + bits.TrailingZeros64(rest)
			if i >= len(g.toks) {
				continue
			}
			switch t := g.toks[i]; t.kind {
			case tokLit:
				if c == t.c {
					setBit(next, i+1)
				}
			case tokOne:
				if inClass {
					setBit(next, i+1)
				}
			case tokStar:
				if inClass {
					setBit(next, i)
				}
			}
		}
	}
	g.closure(next)
}

// globRun holds the two state sets of one match, in buf for short globs
// (so on the stack: no pointer into the run is kept in it, which would
// move it to the heap on every match) and in spill for long ones; flip
// tells which half is the current set.
type globRun struct {
	g     *Program
	any   bool // * and ? match any byte
	flip  bool
	words int
	buf   [4]uint64
	spill []uint64
}

// sets returns the current state set and the one the next step writes.
func (r *globRun) sets() (cur, next []uint64) {
	all := r.buf[:]
	if r.spill != nil {
		all = r.spill
	}
	a, b := all[:r.words], all[r.words:2*r.words]
	if r.flip {
		return b, a
	}
	return a, b
}

// cur is the current state set.
func (r *globRun) cur() []uint64 {
	cur, _ := r.sets()
	return cur
}

func (g *Program) start(r *globRun, strict bool) {
	r.g = g
	r.any = strict && g.anyChar
	r.words = len(g.final)
	if 2*r.words > len(r.buf) {
		r.spill = make([]uint64, 2*r.words)
	}
	cur := r.cur()
	clear(cur)
	cur[0] = 1
	g.closure(cur)
}

func (r *globRun) advance(c byte) {
	cur, next := r.sets()
	r.g.step(cur, next, c, r.any)
	r.flip = !r.flip
}

// feed advances over the byte of v at i, or over unread input
// (shell.InputMark) as a whole in a strict match, and returns the index of
// the last byte it took.
func (r *globRun) feed(v string, i int) int {
	if r.any && v[i] == shell.InputMark[0] && i+1 < len(v) && v[i+1] == shell.InputByte {
		r.anyText()
		return i + 1
	}
	r.advance(v[i])
	return i
}

// anyText advances a strict match over unread input (shell.InputMark): it
// may be any text, so every state from the lowest one held on is reached
// (a glob is a sequence of tokens, and some text spells each token up to
// any later state). A deny or ask glob so meets every command the input
// may make (docs/decisions.md#unread-input).
func (r *globRun) anyText() {
	n := len(r.g.toks) + 1
	cur := r.cur()
	low := -1
	for i := range n {
		if hasBit(cur, i) {
			low = i
			break
		}
	}
	if low < 0 {
		return
	}
	for i := low; i < n; i++ {
		setBit(cur, i)
	}
}

func (r *globRun) accepting() bool { return intersects(r.cur(), r.g.final) }

// match reports whether the glob matches all of v; strict lets * and ?
// match any byte when the glob is a deny or ask rule's.
func (g *Program) Match(v string, strict bool) bool {
	if g.isLiteral && strings.IndexByte(v, shell.InputMark[0]) < 0 {
		return g.matchLiteral(v, strict)
	}
	var r globRun
	g.start(&r, strict)
	for i := 0; i < len(v) && anyBit(r.cur()); i++ {
		i = r.feed(v, i)
	}
	return r.accepting()
}

// matchLiteral is match for a literal glob on a value without unread input
// (which the NFA reads as any text): the literal itself, or, with the
// trailing " *", the literal, a space and a run of class characters (any
// characters in a strict match of a deny or ask rule's glob).
func (g *Program) matchLiteral(v string, strict bool) bool {
	if !strings.HasPrefix(v, g.literal) {
		return false
	}
	rest := v[len(g.literal):]
	switch {
	case rest == "":
		return true
	case !g.literalTail || rest[0] != ' ':
		return false
	case strict && g.anyChar:
		return true
	}
	return !OutsideClass(rest[1:])
}

// matchPathOrParent reports whether the glob matches v, or any parent p of v
// as p or p/ (docs/decisions.md), in one pass: the parents of v are its prefixes
// that end before a /, and p/ is the prefix one byte longer. Trying each
// parent from scratch would be quadratic in the length of the path.
func (g *Program) MatchPathOrParent(v string, strict bool) bool {
	var r globRun
	g.start(&r, strict)
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '/' && i > 0 && r.accepting() {
			return true // the parent v[:i]
		}
		i = r.feed(v, i)
		if c == '/' {
			if r.accepting() {
				return true // v[:i]+"/", or the root parent "/" when i == 0
			}
			if i == 0 && g.matchRootSlash(strict) {
				return true
			}
		}
		if !anyBit(r.cur()) {
			return false
		}
	}
	return r.accepting()
}

// matchRootSlash is the root parent tried as p/: "//".
func (g *Program) matchRootSlash(strict bool) bool { return g.Match("//", strict) }

// outsideClass reports whether v has a byte that a glob * matches only in
// a strict match.
func OutsideClass(v string) bool {
	for i := 0; i < len(v); i++ {
		if !classTable[v[i]] {
			return true
		}
	}
	return false
}
