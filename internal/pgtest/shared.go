package pgtest

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// shared is the cluster of the test binary that Shared starts once.
var shared struct {
	mu      sync.Mutex
	started bool
	c       *Cluster
	err     error
}

// Shared returns the test binary's one cluster, starting it at the first
// call. Tests use NewDatabase on it for a database of their own. Main
// stops it when the tests end; a package that uses Shared without Main
// leaves the server to die with the binary (it gets SIGQUIT when the
// binary exits) and its temp dir behind until the next New sweeps it.
//
// A test must not Stop the shared cluster: others use it. A test of the
// database going away uses a cluster of its own (Start).
func Shared(tb testing.TB) *Cluster {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.started {
		shared.started = true
		shared.c, shared.err = New()
	}
	if shared.err != nil {
		skipOrFail(tb, shared.err)
	}
	return shared.c
}

// Main runs the tests of m and then stops the shared cluster, if one was
// started, and removes its files. Use it in TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.c != nil {
		if err := shared.c.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: close shared cluster:", err)
		}
		shared.c = nil
	}
	return code
}
