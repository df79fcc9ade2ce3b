package engine

import (
	"math/rand"
	"strings"
	"testing"
	"time"
)

// naiveMatchPath is the contract's definition, parent by parent: the value,
// then every parent p as p and as p/.
func naiveMatchPath(g *globProgram, v string) bool {
	if g.match(v, false) {
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
		if g.match(p, false) || g.match(p+"/", false) {
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
		g := newGlobProgram(pb.String())
		v := vb.String()
		if got, want := g.matchPathOrParent(v, false), naiveMatchPath(g, v); got != want {
			t.Fatalf("glob %q on %q: one pass %v, definition %v", pb.String(), v, got, want)
		}
	}
}

// TestGlobLongPathIsLinear: a path of 1 MiB with a slash every other byte
// is matched against a path glob quickly (trying each parent from scratch
// would be quadratic and take minutes).
func TestGlobLongPathIsLinear(t *testing.T) {
	m := compileGlob("**/.ssh/**")
	v := strings.Repeat("a/", 1<<19)
	start := time.Now()
	if m.matchPath(v) {
		t.Fatal("matched a path without .ssh")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("1 MiB path took %v", d)
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
		g := newGlobProgram(pattern)
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
				if got, want := g.match(v, strict), nfa.match(v, strict); got != want {
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
