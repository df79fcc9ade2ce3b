package pgtest

import (
	"testing"
	"time"
)

// NewDSN returns the URL of a fresh database on the test binary's shared
// cluster (Shared, then NewDatabase).
func NewDSN(tb testing.TB) string {
	tb.Helper()
	return Shared(tb).NewDatabase(tb)
}

// WaitFor polls cond every 10 ms until it holds, and fails the test when d
// passes first: what a replica hears through LISTEN/NOTIFY arrives a little
// later than the write that caused it.
func WaitFor(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
