// Package sqlite opens toolgate's embedded SQLite databases (the decision
// log, the approval history: one file each) and applies the migrations of
// the one database it opens, so that no file gets another part's tables.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"slices"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is one embedded SQLite database. It is safe for concurrent use.
type DB struct {
	sql *sql.DB
}

// Migration is one ordered schema change. Versions start at 1, are unique
// and are applied in ascending order, each once, inside a transaction.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// busyTimeout is how long a connection waits for a lock held by another
// writer before it fails with SQLITE_BUSY.
const busyTimeout = 10 * time.Second

// Open opens (creating if needed) the database file at path in WAL mode
// with a busy timeout and foreign keys on, and applies the pending ones of
// migrations, the schema history of this one database. Never edit or
// renumber a migration that has shipped; append the next version.
func Open(path string, migrations []Migration) (*DB, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open db %s: %w", path, err)
	}
	d := &DB{sql: db}
	if err := d.migrate(context.Background(), migrations); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: migrate db %s: %w", path, err)
	}
	return d, nil
}

// SQL returns the underlying handle, for parts that keep their own tables
// in the same file (such as the decision log).
func (d *DB) SQL() *sql.DB { return d.sql }

// Close closes the database.
func (d *DB) Close() error { return d.sql.Close() }

// SchemaVersion returns the highest migration applied.
func (d *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := d.sql.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v)
	return int(v.Int64), err
}

func (d *DB) migrate(ctx context.Context, list []Migration) error {
	list = slices.Clone(list)
	slices.SortFunc(list, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range list {
		if m.Version < 1 || (i > 0 && list[i-1].Version == m.Version) {
			return fmt.Errorf("migration %d %q: version must be unique and >= 1", m.Version, m.Name)
		}
	}
	if _, err := d.sql.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return err
	}
	for _, m := range list {
		if err := d.apply(ctx, m); err != nil {
			return fmt.Errorf("migration %d %q: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// apply runs one migration unless it is recorded; the check and the change
// share an immediate transaction, so two processes never both apply it.
func (d *DB) apply(ctx context.Context, m Migration) error {
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, time.Now().UnixNano()); err != nil {
		return err
	}
	return tx.Commit()
}
