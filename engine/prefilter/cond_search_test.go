package prefilter

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveContainsFolded is the definition: some place of v where every byte,
// through foldTable, is the literal's.
func naiveContainsFolded(v, lit string) bool {
	for i := 0; i+len(lit) <= len(v); i++ {
		j := 0
		for j < len(lit) && foldTable[v[i+j]] == lit[j] {
			j++
		}
		if j == len(lit) {
			return true
		}
	}
	return false
}

// TestContainsFoldedIsTheDefinition: the condition's search (which skips
// places by the literal's first byte) answers as trying every place does,
// for random values and literals over bytes that fold (letters of both
// cases, / and \) and bytes that do not, folded literals and unfolded ones
// alike. A search that missed a place would skip a rule that applies.
func TestContainsFoldedIsTheDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2026))
	const alphabet = "aAbBsS/\\ -.|\xc5\x80"
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	found := 0
	for range 200000 {
		v, lit := word(r.IntN(24)), word(r.IntN(5))
		if r.IntN(2) == 0 {
			lit = FoldKey(lit)
		}
		got, want := containsFolded(v, lit), naiveContainsFolded(v, lit)
		if got != want {
			t.Fatalf("containsFolded(%q, %q) = %v, want %v", v, lit, got, want)
		}
		if want {
			found++
		}
	}
	if found < 10000 {
		t.Fatalf("only %d of the pairs contain their literal: the test checked little", found)
	}
}
