package pg

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestMigrateOnceUnderConcurrency: six replicas (pools) migrating the same
// part at once run each step once; a step that is not idempotent (CREATE
// TABLE without IF NOT EXISTS, an INSERT) would fail or count twice
// otherwise.
func TestMigrateOnceUnderConcurrency(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	list := []Migration{
		{Version: 1, Name: "counter", SQL: "CREATE TABLE mig_counter (n integer NOT NULL)"},
		{Version: 2, Name: "first row", SQL: "INSERT INTO mig_counter VALUES (1)"},
	}
	const replicas = 6
	dbs := make([]*DB, replicas)
	for i := range dbs {
		dbs[i] = openDB(t, dsn)
	}
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	for i, db := range dbs {
		wg.Go(func() { errs[i] = Migrate(context.Background(), db, "mig_test", list) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: Migrate: %v", i, err)
		}
	}
	var rows, steps int
	ctx := context.Background()
	if err := dbs[0].pool.QueryRow(ctx, "SELECT count(*) FROM mig_counter").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := dbs[0].pool.QueryRow(ctx, "SELECT count(*) FROM schema_migrations WHERE part = 'mig_test'").Scan(&steps); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || steps != 2 {
		t.Errorf("got %d counter rows and %d recorded steps, want 1 and 2", rows, steps)
	}

	// A later step added to the list runs once on the next start; the
	// older list (a replica not yet upgraded) still starts.
	longer := append(list, Migration{Version: 3, Name: "second row", SQL: "INSERT INTO mig_counter VALUES (2)"})
	for _, l := range [][]Migration{longer, longer, list} {
		if err := Migrate(ctx, dbs[1], "mig_test", l); err != nil {
			t.Fatalf("Migrate %d steps: %v", len(l), err)
		}
	}
	if err := dbs[0].pool.QueryRow(ctx, "SELECT count(*) FROM mig_counter").Scan(&rows); err != nil || rows != 2 {
		t.Errorf("after step 3: %d rows (%v), want 2", rows, err)
	}
}

// TestMigrateRefusesBadLists: malformed lists and a renamed applied step
// are errors, and nothing runs.
func TestMigrateRefusesBadLists(t *testing.T) {
	db := openDB(t, pgtest.NewDSN(t))
	ctx := context.Background()
	ok := Migration{Version: 1, Name: "t", SQL: "CREATE TABLE mig_bad (n int)"}
	for _, tc := range []struct {
		note string
		part string
		list []Migration
	}{
		{"empty part", "", []Migration{ok}},
		{"part with a quote", "x'y", []Migration{ok}},
		{"starts at 2", "p", []Migration{{Version: 2, Name: "t", SQL: "SELECT 1"}}},
		{"gap", "p", []Migration{ok, {Version: 3, Name: "t", SQL: "SELECT 1"}}},
		{"no SQL", "p", []Migration{{Version: 1, Name: "t"}}},
		{"no name", "p", []Migration{{Version: 1, SQL: "SELECT 1"}}},
	} {
		if err := Migrate(ctx, db, tc.part, tc.list); !errors.Is(err, ErrBadMigrations) {
			t.Errorf("%s: err = %v, want ErrBadMigrations", tc.note, err)
		}
	}
	if err := Migrate(ctx, db, "p", []Migration{ok}); err != nil {
		t.Fatal(err)
	}
	renamed := []Migration{{Version: 1, Name: "other", SQL: ok.SQL}}
	if err := Migrate(ctx, db, "p", renamed); !errors.Is(err, ErrBadMigrations) {
		t.Errorf("renamed step: err = %v, want ErrBadMigrations", err)
	}
	// A failing step rolls the whole run back: step 2 fails, so step 1's
	// table does not exist afterwards.
	failing := []Migration{{Version: 1, Name: "a", SQL: "CREATE TABLE mig_rolled (n int)"}, {Version: 2, Name: "b", SQL: "SELEC nonsense"}}
	if err := Migrate(ctx, db, "q", failing); err == nil {
		t.Fatal("failing step: no error")
	}
	var exists bool
	if err := db.pool.QueryRow(ctx, "SELECT to_regclass('mig_rolled') IS NOT NULL").Scan(&exists); err != nil || exists {
		t.Errorf("table of a rolled-back run exists=%v (%v), want false", exists, err)
	}
}
