package pg

import (
	"context"
	"os"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openDB opens dsn as one replica would; t.Cleanup closes it. (dbtest.Open
// does the same for other packages; it cannot be imported here.)
func openDB(t *testing.T, dsn string) *DB {
	t.Helper()
	db, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(db.Close)
	return db
}
