package grants

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/store/pg"
)

// PGStore keeps the grants of every replica in PostgreSQL; it is
// grant.Store. It is safe for concurrent use.
type PGStore struct {
	db *pg.DB
}

var _ grant.Store = (*PGStore)(nil)

// OpenPG migrates the grants' part of db and returns the store.
func OpenPG(ctx context.Context, db *pg.DB) (*PGStore, error) {
	if err := pg.MigrateParts(ctx, db, pg.PartGrants); err != nil {
		return nil, err
	}
	return &PGStore{db: db}, nil
}

const insertPG = `INSERT INTO grants (` + columns + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`

// pgValues are g's columns in columns' order. Times are kept to the
// millisecond, as grants.db keeps them, so that both stores read a grant
// back alike (timestamptz would keep microseconds).
func pgValues(g grant.Grant) []any {
	return values(g, g.CreatedAt.UTC().Truncate(time.Millisecond), g.ExpiresAt.UTC().Truncate(time.Millisecond))
}

// AddGrant stores g and notifies every replica, in one transaction: the
// approval answer's that ctx carries (a txn.Enclosing of this database),
// so that the grant and the answer commit together, else one of its own.
func (s *PGStore) AddGrant(ctx context.Context, g grant.Grant) error {
	return s.inTx(ctx, "add a grant", func(octx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(octx, insertPG, pgValues(g)...)
		if err != nil {
			return err
		}
		_, err = tx.Exec(octx, `SELECT pg_notify($1, $2)`, pg.ChannelGrants, g.ID)
		return err
	})
}

// RevokeGrant deletes the grant with id, notifies every replica and
// returns it; grant.ErrNotFound when there is none.
func (s *PGStore) RevokeGrant(ctx context.Context, id string) (grant.Grant, error) {
	var g grant.Grant
	err := s.inTx(ctx, "revoke a grant", func(octx context.Context, tx pgx.Tx) error {
		var err error
		g, err = scanPG(tx.QueryRow(octx, `DELETE FROM grants WHERE id = $1 RETURNING `+columns, id))
		if err != nil {
			return err
		}
		_, err = tx.Exec(octx, `SELECT pg_notify($1, $2)`, pg.ChannelGrants, id)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return grant.Grant{}, fmt.Errorf("%w: %s", grant.ErrNotFound, id)
	}
	return g, err
}

// LiveGrants lists the grants that expire after now, oldest first, and
// deletes the expired ones.
func (s *PGStore) LiveGrants(ctx context.Context, now time.Time) ([]grant.Grant, error) {
	octx, cancel := s.db.Op(ctx)
	defer cancel()
	if _, err := s.db.Pool().Exec(octx, `DELETE FROM grants WHERE expires_at <= $1`, now); err != nil {
		return nil, s.db.Wrap(ctx, err, "sweep grants")
	}
	rows, err := s.db.Pool().Query(octx, `SELECT `+columns+` FROM grants WHERE expires_at > $1 ORDER BY created_at, id`, now)
	if err != nil {
		return nil, s.db.Wrap(ctx, err, "list grants")
	}
	defer rows.Close()
	var out []grant.Grant
	for rows.Next() {
		g, err := scanPG(rows)
		if err != nil {
			return nil, s.db.Wrap(ctx, err, "list grants")
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, s.db.Wrap(ctx, err, "list grants")
	}
	return out, nil
}

// WatchGrants calls changed on every notice of a grant added or revoked
// through any replica, and after each (re)connection of the listener (a
// notice may have been missed), until ctx ends.
func (s *PGStore) WatchGrants(ctx context.Context, changed func()) error {
	return s.db.Listener().Watch(ctx, pg.ChannelGrants, changed)()
}

// inTx runs fn in one transaction bounded by the operation timeout (a
// savepoint of the enclosing transaction ctx carries, if any: see
// pg.DB.Beginner).
func (s *PGStore) inTx(ctx context.Context, what string, fn func(context.Context, pgx.Tx) error) error {
	octx, cancel := s.db.Op(ctx)
	defer cancel()
	err := pgx.BeginFunc(octx, s.db.Beginner(ctx), func(tx pgx.Tx) error { return fn(octx, tx) })
	if errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if err != nil {
		return s.db.Wrap(ctx, err, what)
	}
	return nil
}

// scanPG reads one row of columns from the table in PostgreSQL, whose
// times are timestamptz.
func scanPG(row pgx.Row) (grant.Grant, error) {
	var created, expires time.Time
	g, err := scanWith(row, &created, &expires)
	g.CreatedAt, g.ExpiresAt = created.UTC(), expires.UTC()
	return g, err
}
