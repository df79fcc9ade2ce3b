package grant_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/grant/granttest"
	"github.com/toolgate/toolgate/store/grants"
)

// bookWith returns a started Book over a fresh grants.db holding n live
// grants, none of which covers granttest.Level's "npm test".
func bookWith(tb testing.TB, base *engine.Engine, n int) *grant.Book {
	tb.Helper()
	st, err := grants.Open(filepath.Join(tb.TempDir(), "grants.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	book := grant.NewBook(st, grant.Options{})
	if err := book.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		g := granttest.Sample("", time.Now(), time.Hour)
		g.Pattern, g.Workspace = "make target-"+strconv.Itoa(i), base.GrantWorkspace(&engine.Request{})
		if _, err := book.Add(ctx, g); err != nil {
			tb.Fatal(err)
		}
	}
	return book
}

// TestBookEngineCached: once made, the Book's engine is reused until the
// grants or the policy change, so a decision pays for no grant compile
// and allocates nothing to find its engine.
func TestBookEngineCached(t *testing.T) {
	base := granttest.Engine(t, "/ws")
	book := bookWith(t, base, 10)
	first := book.Engine(base)
	if first == base || first.Grants() != 10 {
		t.Fatalf("engine consults %d grants, want 10", first.Grants())
	}
	if allocs := testing.AllocsPerRun(100, func() { book.Engine(base) }); allocs != 0 {
		t.Errorf("Engine allocates %v times a call once made, want 0", allocs)
	}
	if book.Engine(base) != first {
		t.Error("Engine made a new engine with nothing changed")
	}
	other := granttest.Engine(t, "/ws")
	if e := book.Engine(other); e == first || e.Grants() != 10 {
		t.Error("a new policy engine did not get the grants anew")
	}
}

// BenchmarkBookEngine is the cost a door pays to find the engine with the
// live grants (two atomic loads and a comparison), by number of grants.
func BenchmarkBookEngine(b *testing.B) {
	base := granttest.Engine(b, "/ws")
	for _, n := range []int{0, 10, 1000} {
		book := bookWith(b, base, n)
		b.Run("grants="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				book.Engine(base)
			}
		})
	}
}
