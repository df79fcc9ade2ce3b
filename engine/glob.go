package engine

import (
	"math/bits"
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
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

// globProgram is a compiled glob (docs/decisions.md): anchored at both ends, with
// * and ? limited to the class of classTable, and a trailing " *" that also
// matches nothing. It runs as an NFA whose states are the token boundaries, kept as
// a bit set (one uint64 for globs of up to 63 tokens, the common case, which
// then costs no allocation): linear in the value, whatever the pattern, and
// cheap to compile, which matters for policies of 100,000 rules.
type globProgram struct {
	toks  []globTok
	final []uint64 // accepting states; its length is the words of every state set
	// anyChar lets * and ? match any byte in a strict match: set for deny
	// and ask rules, whose globs must not be slipped past with a character
	// outside the class (git push origin +main;
	// docs/decisions.md#deny-globs-match-any-character).
	anyChar bool
}

// classTable marks the bytes a glob * or ? may match (docs/decisions.md):
// [-a-zA-Z0-9 ._/:"'], never ; & | $ \ ` < > ( ) or a newline.
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
	// Sized once: a policy of 100,000 rules keeps 100,000 of these.
	n := len(body)
	if optionalTail {
		n += 2
	}
	g := &globProgram{toks: make([]globTok, 0, n)}
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
	g.final = make([]uint64, (len(g.toks)+1+63)/64)
	setBit(g.final, bodyEnd)
	if optionalTail {
		setBit(g.final, len(g.toks))
	}
	return g
}

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
func (g *globProgram) closure(set []uint64) {
	for i, t := range g.toks {
		if t.kind == tokStar && hasBit(set, i) {
			setBit(set, i+1)
		}
	}
}

// step advances the state set cur over one byte into next (cleared first);
// any lets * and ? match any byte.
func (g *globProgram) step(cur, next []uint64, c byte, any bool) {
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

// globRun holds the two state sets of one match, on the stack for short globs.
type globRun struct {
	g         *globProgram
	any       bool // * and ? match any byte
	buf       [4]uint64
	cur, next []uint64
}

func (g *globProgram) start(r *globRun, strict bool) {
	r.g = g
	r.any = strict && g.anyChar
	words := len(g.final)
	if 2*words <= len(r.buf) {
		r.cur, r.next = r.buf[:words], r.buf[words:2*words]
	} else {
		r.cur, r.next = make([]uint64, words), make([]uint64, words)
	}
	clear(r.cur)
	r.cur[0] = 1
	g.closure(r.cur)
}

func (r *globRun) advance(c byte) {
	r.g.step(r.cur, r.next, c, r.any)
	r.cur, r.next = r.next, r.cur
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
	low := -1
	for i := range n {
		if hasBit(r.cur, i) {
			low = i
			break
		}
	}
	if low < 0 {
		return
	}
	for i := low; i < n; i++ {
		setBit(r.cur, i)
	}
}

func (r *globRun) accepting() bool { return intersects(r.cur, r.g.final) }

// match reports whether the glob matches all of v; strict lets * and ?
// match any byte when the glob is a deny or ask rule's.
func (g *globProgram) match(v string, strict bool) bool {
	var r globRun
	g.start(&r, strict)
	for i := 0; i < len(v) && anyBit(r.cur); i++ {
		i = r.feed(v, i)
	}
	return r.accepting()
}

// matchPathOrParent reports whether the glob matches v, or any parent p of v
// as p or p/ (docs/decisions.md), in one pass: the parents of v are its prefixes
// that end before a /, and p/ is the prefix one byte longer. Trying each
// parent from scratch would be quadratic in the length of the path.
func (g *globProgram) matchPathOrParent(v string, strict bool) bool {
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
		if !anyBit(r.cur) {
			return false
		}
	}
	return r.accepting()
}

// matchRootSlash is the root parent tried as p/: "//".
func (g *globProgram) matchRootSlash(strict bool) bool { return g.match("//", strict) }

// outsideClass reports whether v has a byte that a glob * matches only in
// a strict match.
func outsideClass(v string) bool {
	for i := 0; i < len(v); i++ {
		if !classTable[v[i]] {
			return true
		}
	}
	return false
}
