package sqlite

import (
	"context"
	"path/filepath"
	"testing"
)

var testMigrations = []Migration{{Version: 1, Name: "one", SQL: `CREATE TABLE one (x INTEGER)`}, {Version: 2, Name: "two", SQL: `CREATE TABLE two (x INTEGER)`}}

func openTestDB(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolgate.db")
	db, err := Open(path, testMigrations)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func TestOpenDBSettings(t *testing.T) {
	db, _ := openTestDB(t)
	var mode string
	if err := db.SQL().QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode: got %q %v, want wal", mode, err)
	}
	var busy int
	if err := db.SQL().QueryRow(`PRAGMA busy_timeout`).Scan(&busy); err != nil || busy != int(busyTimeout.Milliseconds()) {
		t.Errorf("busy_timeout: got %d %v, want %d", busy, err, busyTimeout.Milliseconds())
	}
	var fk int
	if err := db.SQL().QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys: got %d %v, want 1", fk, err)
	}
}

func TestOpenDBMigratesOnce(t *testing.T) {
	db, path := openTestDB(t)
	want := testMigrations[len(testMigrations)-1].Version
	if v, err := db.SchemaVersion(context.Background()); err != nil || v != want {
		t.Fatalf("SchemaVersion: got %d %v, want %d", v, err, want)
	}
	db.Close()
	again, err := Open(path, testMigrations) // reopening must not re-run migration 1 (CREATE TABLE would fail)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer again.Close()
	var n int
	if err := again.SQL().QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(testMigrations) {
		t.Errorf("schema_migrations rows: got %d %v, want %d", n, err, len(testMigrations))
	}
}

func TestMigrateExtends(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	extra := append(testMigrations, Migration{Version: 99, Name: "test table", SQL: `CREATE TABLE extra (x INTEGER)`})
	if err := db.migrate(ctx, extra); err != nil {
		t.Fatalf("migrate with an appended migration: %v", err)
	}
	if _, err := db.SQL().Exec(`INSERT INTO extra (x) VALUES (1)`); err != nil {
		t.Errorf("appended migration's table: %v", err)
	}
	if v, _ := db.SchemaVersion(ctx); v != 99 {
		t.Errorf("SchemaVersion: got %d, want 99", v)
	}
}

func TestMigrateRefusesBadLists(t *testing.T) {
	db, _ := openTestDB(t)
	tests := []struct {
		note string
		list []Migration
	}{
		{"duplicate version", []Migration{{Version: 5, SQL: "SELECT 1"}, {Version: 5, SQL: "SELECT 1"}}},
		{"version zero", []Migration{{Version: 0, SQL: "SELECT 1"}}},
	}
	for _, tt := range tests {
		if err := db.migrate(context.Background(), tt.list); err == nil {
			t.Errorf("%s: got nil error, want a refusal", tt.note)
		}
	}
	failing := []Migration{{Version: 50, Name: "broken", SQL: `CREATE TABLE broken (x INTEGER); NOT SQL`}}
	if err := db.migrate(context.Background(), failing); err == nil {
		t.Fatal("a broken migration: got nil error")
	}
	var n int
	err := db.SQL().QueryRow(`SELECT count(*) FROM schema_migrations WHERE version = 50`).Scan(&n)
	if err != nil || n != 0 {
		t.Errorf("broken migration recorded: %d %v, want rolled back", n, err)
	}
	if _, err := db.SQL().Exec(`SELECT * FROM broken`); err == nil {
		t.Error("broken migration left its table behind; want the transaction rolled back")
	}
}
