package pg

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// newDSN returns the URL of a fresh database on the shared cluster.
func newDSN(t *testing.T) string {
	t.Helper()
	return pgtest.Shared(t).NewDatabase(t)
}

// openDB opens dsn as one replica would; t.Cleanup closes it.
func openDB(t *testing.T, dsn string) *DB {
	t.Helper()
	db, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(db.Close)
	return db
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
