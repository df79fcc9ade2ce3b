package engine

import (
	"math/rand/v2"
	"path"
	"strings"
	"testing"
)

// TestUntidyIsPathClean: untidy's shortcut answers as path.Clean would, on
// random paths built from the elements that matter (empty, ., .., names
// with and without dots, a backslash).
func TestUntidyIsPathClean(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2026))
	parts := []string{"", ".", "..", "a", ".env", "b.c", "..x", "x.", `s\t`}
	for range 50000 {
		var b strings.Builder
		if r.IntN(2) == 0 {
			b.WriteByte('/')
		}
		for i, n := 0, r.IntN(5); i < n; i++ {
			if i > 0 {
				b.WriteByte('/')
			}
			b.WriteString(parts[r.IntN(len(parts))])
		}
		if r.IntN(4) == 0 {
			b.WriteByte('/')
		}
		v := b.String()
		s := strings.ReplaceAll(v, `\`, "/")
		if want := path.Clean(s) != s; untidy(v) != want {
			t.Fatalf("untidy(%q) = %v, path.Clean says %v", v, !want, want)
		}
	}
}
