// Package dbtest opens a store/pg DB on a fresh database of the pgtest
// cluster, for the tests of the packages whose PostgreSQL stores sit on it
// (store/auth, store/decisionlog, store/grants, store/history, store/asks,
// store). It lives apart from internal/pgtest, which starts the cluster and
// knows no toolgate package, so that the test helpers stay below storage.
package dbtest

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store/pg"
)

// Open opens dsn as one replica would; the test's cleanup closes it.
func Open(tb testing.TB, dsn string) *pg.DB {
	tb.Helper()
	db, err := pg.Open(context.Background(), dsn, pg.Options{})
	if err != nil {
		tb.Fatalf("pg.Open: %v", err)
	}
	tb.Cleanup(db.Close)
	return db
}

// New opens a fresh database of the shared cluster and returns it with its
// URL, for a second replica on the same database (Open(tb, dsn)).
func New(tb testing.TB) (*pg.DB, string) {
	tb.Helper()
	dsn := pgtest.NewDSN(tb)
	return Open(tb, dsn), dsn
}
