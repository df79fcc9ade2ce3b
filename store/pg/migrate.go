package pg

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"
)

// Migration is one step of a part's schema. Versions of a part start at 1
// and count up by one; an applied step is never edited, a change is a new
// step.
type Migration struct {
	Version int
	// Name says what the step does; it is recorded and checked, so that a
	// list mixed up with another part's is caught.
	Name string
	SQL  string
}

// migrationLockKey is the pg_advisory_xact_lock key every replica takes
// before migrating ("toolgate" in ASCII), so that the steps of a database
// run once however many replicas start at the same moment.
const migrationLockKey int64 = 0x746f6f6c67617465

// ErrBadMigrations is returned for a list whose versions are not 1, 2, ...
// or whose part name is malformed; it is a programming error.
var ErrBadMigrations = errors.New("pg: bad migration list")

var partName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,40}$`)

// Migrate brings part's tables up to the last step of list, in one
// transaction under the migration advisory lock: a replica that comes
// second waits and then finds nothing to do. A database whose part is at a
// later version than list knows (a newer replica ran first, as in a rolling
// upgrade) is left as it is; a recorded step whose name differs from list's
// is an error.
func Migrate(ctx context.Context, db *DB, part string, list []Migration) error {
	if err := checkList(part, list); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLockKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			part       text        NOT NULL,
			version    integer     NOT NULL,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now(),
			PRIMARY KEY (part, version))`); err != nil {
			return err
		}
		applied, err := appliedSteps(ctx, tx, part)
		if err != nil {
			return err
		}
		for _, m := range list {
			if name, ok := applied[m.Version]; ok {
				if name != m.Name {
					return fmt.Errorf("%w: %s step %d is %q in the database, %q here", ErrBadMigrations, part, m.Version, name, m.Name)
				}
				continue
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("%s step %d (%s): %w", part, m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (part, version, name) VALUES ($1, $2, $3)",
				part, m.Version, m.Name); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, ErrBadMigrations) {
		return err
	}
	return db.Wrap(ctx, err, "migrate "+part)
}

// checkList rejects a malformed part name or a list that is not steps
// 1..n in order with SQL.
func checkList(part string, list []Migration) error {
	if !partName.MatchString(part) {
		return fmt.Errorf("%w: part name %q", ErrBadMigrations, part)
	}
	for i, m := range list {
		if m.Version != i+1 || m.Name == "" || m.SQL == "" {
			return fmt.Errorf("%w: %s item %d must be version %d with a name and SQL", ErrBadMigrations, part, i, i+1)
		}
	}
	return nil
}

// appliedSteps returns the recorded steps of part, version to name.
func appliedSteps(ctx context.Context, tx pgx.Tx, part string) (map[int]string, error) {
	rows, err := tx.Query(ctx, "SELECT version, name FROM schema_migrations WHERE part = $1", part)
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	var v int
	var name string
	_, err = pgx.ForEachRow(rows, []any{&v, &name}, func() error {
		out[v] = name
		return nil
	})
	return out, err
}
