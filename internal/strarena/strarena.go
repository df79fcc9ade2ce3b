// Package strarena hands out strings that are views of large shared
// blocks, so that many small strings kept for long (a decoded policy of
// 100,000 rules) fill pages of their own without one allocation each,
// instead of staying among a parser's garbage and keeping its pages
// resident. Short strings are stored once however often they occur. It
// owns nothing but the blocks; what to copy into them is the caller's.
package strarena

import "strings"

// maxShared is the longest string an Arena stores once however often it
// occurs; longer ones (ids, patterns) are rarely repeated, and a lookup for
// each would cost more than the bytes.
const maxShared = 16

// block is the size of one block of an Arena.
const block = 64 << 10

// Arena hands out strings that are views of its blocks. It is not safe for
// concurrent use.
type Arena struct {
	block strings.Builder
	short map[string]string
}

// New returns an empty Arena.
func New() *Arena { return &Arena{short: map[string]string{}} }

// Copy returns the arena's copy of s.
func (a *Arena) Copy(s string) string {
	if len(s) <= maxShared {
		if t, ok := a.short[s]; ok {
			return t
		}
	}
	a.reserve(len(s))
	start := a.block.Len()
	a.block.WriteString(s)
	return a.keep(start, len(s))
}

// CopyBytes returns the arena's copy of b as a string.
func (a *Arena) CopyBytes(b []byte) string {
	if len(b) <= maxShared {
		if s, ok := a.short[string(b)]; ok { // no allocation for the lookup
			return s
		}
	}
	a.reserve(len(b))
	start := a.block.Len()
	a.block.Write(b)
	return a.keep(start, len(b))
}

// reserve makes room for n bytes in the current block. A full block is
// replaced by a fresh builder, never grown: strings already handed out
// stay views of the old block, which no one writes again.
func (a *Arena) reserve(n int) {
	if a.block.Cap()-a.block.Len() < n {
		a.block = strings.Builder{}
		a.block.Grow(max(block, n))
	}
}

// keep returns the n bytes written at start as a string, remembered when
// short.
func (a *Arena) keep(start, n int) string {
	s := a.block.String()[start : start+n]
	if n <= maxShared {
		a.short[s] = s
	}
	return s
}
