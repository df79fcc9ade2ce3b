package glob

import (
	"math/rand"
	randv2 "math/rand/v2"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine/shell"
)

// naiveMatchPath is the contract's definition, parent by parent: the value,
// then every parent p as p and as p/.
func naiveMatchPath(g *Program, v string) bool {
	if g.Match(v, false) {
		return true
	}
	for i := len(v) - 1; i >= 0; i-- {
		if v[i] != '/' {
			continue
		}
		p := v[:i]
		if i == 0 {
			p = "/"
		}
		if g.Match(p, false) || g.Match(p+"/", false) {
			return true
		}
	}
	return false
}

// TestGlobParentsOnePassAgreesWithDefinition compares the one-pass parent
// matching with the parent-by-parent definition on random globs and paths,
// short (one-word state sets) and long (several words).
func TestGlobParentsOnePassAgreesWithDefinition(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	pieces := []string{"*", "?", "/", "a", "b", ".", "**", " ", "/a", "a/"}
	values := []string{"/", "a", "b", ".", "/a", "a/", "//", " ", ";", "ab"}
	for n := 0; n < 20000; n++ {
		var pb, vb strings.Builder
		pl := 1 + rng.Intn(6)
		if n%50 == 0 {
			pl = 40 + rng.Intn(40) // more than 63 tokens: several words
		}
		for i := 0; i < pl; i++ {
			pb.WriteString(pieces[rng.Intn(len(pieces))])
		}
		for i, vl := 0, rng.Intn(8); i < vl; i++ {
			vb.WriteString(values[rng.Intn(len(values))])
		}
		g := Compile(pb.String())
		v := vb.String()
		if got, want := g.MatchPathOrParent(v, false), naiveMatchPath(g, v); got != want {
			t.Fatalf("glob %q on %q: one pass %v, definition %v", pb.String(), v, got, want)
		}
	}
}

// TestLiteralGlobAgreesWithNFA: a prefix rule's glob (a literal with an
// optional trailing " *") decided by matchLiteral agrees with the NFA on
// random values made from the literal: cut short, extended with class and
// non-class bytes, with unread input, in allow and strict matches.
func TestLiteralGlobAgreesWithNFA(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	pieces := []string{"git", " ", "push", "-", "x", ".", "/", ";", "|", "$", "\n", "`", "\\", "\x00\x01", "\x00", "\x01", "é", "*", "?"}
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		return b.String()
	}
	checked := 0
	for range 4000 {
		body := strings.NewReplacer("*", "", "?", "").Replace(word(1 + rng.Intn(4)))
		pattern := body
		if rng.Intn(2) == 0 {
			pattern += " *"
		}
		g := Compile(pattern)
		if !g.isLiteral {
			t.Fatalf("%q: not read as a literal glob", pattern)
		}
		g.anyChar = rng.Intn(2) == 0
		nfa := *g
		nfa.isLiteral = false
		for range 40 {
			var v string
			switch rng.Intn(4) {
			case 0:
				v = body[:rng.Intn(len(body)+1)] + word(rng.Intn(3))
			case 1:
				v = body + " " + word(rng.Intn(5))
			case 2:
				v = body + word(rng.Intn(3))
			default:
				v = word(rng.Intn(6))
			}
			for _, strict := range []bool{false, true} {
				if got, want := g.Match(v, strict), nfa.Match(v, strict); got != want {
					t.Fatalf("glob %q (anyChar %v) on %q, strict %v: literal path %v, NFA %v", pattern, g.anyChar, v, strict, got, want)
				}
				checked++
			}
		}
	}
	if checked < 300000 {
		t.Fatalf("only %d comparisons", checked)
	}
}

// TestUnreadInputStandsForAnyText is the glob's property: when a strict
// glob matches a value with unread input replaced by some text, it matches
// the value with the mark; and without the mark the matching is unchanged.
func TestUnreadInputStandsForAnyText(t *testing.T) {
	r := randv2.New(randv2.NewPCG(4, 2026))
	alphabet := []string{"git", " ", "push", "*", "?", "/", "secrets", "a", "-f", "x"}
	word := func(n int, withStars bool) string {
		var b strings.Builder
		for range n {
			p := alphabet[r.IntN(len(alphabet))]
			if !withStars && (p == "*" || p == "?") {
				p = "b"
			}
			b.WriteString(p)
		}
		return b.String()
	}
	checked, met := 0, 0
	for range 20000 {
		g := Compile(word(1+r.IntN(5), true))
		g.StrictAnyChar()
		head, tail, fill := word(r.IntN(4), false), word(r.IntN(3), false), word(r.IntN(4), false)
		withMark := head + shell.InputMark + tail
		filled := head + fill + tail
		checked++
		if g.Match(filled, true) {
			met++
			if !g.Match(withMark, true) {
				t.Fatalf("glob %v matches %q but not %q", g.toks, filled, withMark)
			}
		}
		if g.Match(head+tail, false) != compileNoAny(g).Match(head+tail, false) {
			t.Fatalf("the mark changed a match without it")
		}
	}
	if met < 500 {
		t.Fatalf("only %d of %d fillings met their glob: the property checked little", met, checked)
	}
	t.Logf("%d fillings, %d met their glob", checked, met)
}

// compileNoAny is a copy of g without strict matching.
func compileNoAny(g *Program) *Program {
	c := *g
	c.anyChar = false
	return &c
}
