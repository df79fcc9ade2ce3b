package prefilter

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestACDenseTableIsTheAutomaton: the dense transition table, filled
// breadth-first from each state's failure row, moves as walking the
// failure chain (step) does, from every state on every key byte, in both
// table widths; random key sets of a small alphabet (many shared prefixes
// and failure links) and periodic keys.
func TestACDenseTableIsTheAutomaton(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	sets := [][]string{
		{strings.Repeat(") && (", 300)},
		{"abab", "bab", "ba", "aab", "b"},
		{strings.Repeat("ab", 500), strings.Repeat("ba", 499), "abba"},
	}
	for range 200 {
		seen := map[string]bool{}
		var keys []string
		for range 1 + rng.IntN(30) {
			var b strings.Builder
			for range 1 + rng.IntN(12) {
				b.WriteByte("abc&) "[rng.IntN(6)])
			}
			if k := b.String(); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		sets = append(sets, keys)
	}
	for i, keys := range sets {
		m := NewMachine(keys)
		if m.classes == 0 {
			t.Fatalf("set %d: no dense table", i)
		}
		wide := *m
		wide.dense16 = nil
		wide.densifyAs(true)
		for st := range int32(len(m.out)) {
			for c := range 256 {
				want := m.step(st, foldTable[c])
				got16 := int32(m.dense16[int(st)*int(m.classes)+int(m.classOf[c])] &^ reportBit)
				got32 := wide.dense[int(st)*int(m.classes)+int(m.classOf[c])]
				if got16 != want || got32 != want {
					t.Fatalf("set %d state %d byte %q: dense16 %d, dense %d, the chain %d", i, st, byte(c), got16, got32, want)
				}
			}
		}
	}
}
