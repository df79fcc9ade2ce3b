package grants

import (
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/grant/granttest"
)

func open(t *testing.T) grant.Store {
	t.Helper()
	st, err := Open(filepath.Join(t.TempDir(), "grants.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestConformance holds grants.db to every grant.Store's behaviour.
func TestConformance(t *testing.T) { granttest.Conformance(t, open) }

// TestBook: a Book over grants.db decides with what it adds, stops with
// what it revokes, and lets expiry take effect at the clock.
func TestBook(t *testing.T) { granttest.BookFollowsItsStore(t, open(t)) }
