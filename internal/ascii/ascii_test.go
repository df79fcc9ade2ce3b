package ascii

import "testing"

func TestAlnumAnd(t *testing.T) {
	table := AlnumAnd("-_")
	for c := 0; c < 256; c++ {
		b := byte(c)
		want := b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_'
		if table[c] != want {
			t.Errorf("byte %q: marked %v, want %v", b, table[c], want)
		}
	}
}
