package strarena

import (
	"strings"
	"testing"
	"unsafe"
)

// TestCopies: a copy equals its source and is a view of the arena's block,
// short strings are handed out once, a string longer than a block gets a
// block of its own, and a full block is replaced, never grown, so earlier
// copies keep their bytes.
func TestCopies(t *testing.T) {
	a := New()
	x := a.Copy("allow")
	if y := a.CopyBytes([]byte("allow")); x != "allow" || unsafe.StringData(x) != unsafe.StringData(y) {
		t.Errorf("short strings: %q and %q are not one copy", x, "allow")
	}
	long := strings.Repeat("p", maxShared+1)
	if p, q := a.Copy(long), a.Copy(long); p != long || unsafe.StringData(p) == unsafe.StringData(q) {
		t.Error("a long string is stored once per copy, not shared")
	}
	first := a.Copy(strings.Repeat("a", block-100))
	huge := a.Copy(strings.Repeat("b", 2*block))
	if first != strings.Repeat("a", block-100) || huge != strings.Repeat("b", 2*block) || x != "allow" {
		t.Error("a copy changed when a new block was taken")
	}
	tests := []struct {
		note string
		in   string
	}{
		{note: "empty", in: ""},
		{note: "shared length", in: strings.Repeat("k", maxShared)},
		{note: "not ASCII", in: "höhe → tiefe"},
	}
	for _, tt := range tests {
		if got := a.CopyBytes([]byte(tt.in)); got != tt.in {
			t.Errorf("%s: %q, want %q", tt.note, got, tt.in)
		}
	}
}
