package glob

import (
	"math/rand/v2"
	"testing"
)

// TestMayMeetNeverMisses: whenever a concrete path that a filename glob
// expands to is matched by a rule's glob (strictly, path or parent), mayMeet
// says the two may meet. Random globs over a small alphabet, with every
// expansion of the word glob's * and ? up to two characters.
func TestMayMeetNeverMisses(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 28))
	alpha := []byte("ab/.")
	ruleAlpha := []byte("ab/.*?")
	wordAlpha := []byte("ab/.*?")
	gen := func(set []byte, n int) string {
		b := make([]byte, 1+r.IntN(n))
		for i := range b {
			b[i] = set[r.IntN(len(set))]
		}
		return string(b)
	}
	// expand lists the concrete strings a word glob can spell, with * as
	// runs of up to two characters and ? as one, none of them /.
	var expand func(w string) []string
	expand = func(w string) []string {
		if w == "" {
			return []string{""}
		}
		rest := expand(w[1:])
		var heads []string
		switch w[0] {
		case '*':
			heads = []string{""}
			for _, a := range alpha {
				if a == '/' {
					continue
				}
				heads = append(heads, string(a))
				for _, b := range alpha {
					if b != '/' {
						heads = append(heads, string(a)+string(b))
					}
				}
			}
		case '?':
			for _, a := range alpha {
				if a != '/' {
					heads = append(heads, string(a))
				}
			}
		default:
			heads = []string{w[:1]}
		}
		var out []string
		for _, h := range heads {
			for _, t := range rest {
				out = append(out, h+t)
			}
		}
		return out
	}
	checked, met := 0, 0
	for n := 0; n < 3000; n++ {
		g := Compile(gen(ruleAlpha, 5))
		g.StrictAnyChar()
		w := gen(wordAlpha, 5)
		paths := expand(w)
		if len(paths) > 2000 {
			continue
		}
		any := false
		for _, p := range paths {
			if g.MatchPathOrParent(p, true) {
				any = true
				break
			}
		}
		checked++
		if any {
			met++
			if !g.MayMeet(w) {
				t.Fatalf("rule glob %q and word glob %q meet on a path, mayMeet says no", g.toks, w)
			}
		}
	}
	t.Logf("%d pairs, %d meeting", checked, met)
}
