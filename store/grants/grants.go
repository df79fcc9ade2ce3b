// Package grants keeps the grants of one server in the embedded SQLite
// file grants.db (docs/grants.md#storage): it is grant.Store for a server
// without --database-url. It owns that file's table and migrations only;
// what a grant covers is the engine's, and which grants are live on this
// replica is grant.Book's.
package grants

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/store/sqlite"
)

// schema holds one row a grant; times are unix milliseconds (UTC).
const schema = `
CREATE TABLE grants (
	id          TEXT PRIMARY KEY,
	tool_name   TEXT NOT NULL,
	scope       TEXT NOT NULL,
	match_type  TEXT NOT NULL,
	pattern     TEXT NOT NULL,
	args_digest TEXT NOT NULL,
	session_id  TEXT NOT NULL,
	token_id    TEXT NOT NULL,
	channel_id  TEXT NOT NULL,
	workspace   TEXT NOT NULL,
	agent       TEXT NOT NULL,
	summary     TEXT NOT NULL,
	approval_id TEXT NOT NULL,
	granted_by  TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL
);
CREATE INDEX grants_by_expiry ON grants (expires_at);
`

var migrations = []sqlite.Migration{{Version: 1, Name: "grants", SQL: schema}}

// Store is grant.Store over grants.db. It is safe for concurrent use.
type Store struct {
	db *sqlite.DB
}

var _ grant.Store = (*Store)(nil)

// File is the grants' SQLite file in the config dir.
const File = "grants.db"

// Open opens (creating if needed) the grants file at path and applies its
// migrations.
func Open(path string) (*Store, error) {
	db, err := sqlite.Open(path, migrations)
	if err != nil {
		return nil, fmt.Errorf("grants: %w", err)
	}
	return &Store{db: db}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// columns are the grants table's columns, the same in grants.db and in
// PostgreSQL; values and scanWith take them in this order.
const columns = `id, tool_name, scope, match_type, pattern, args_digest, session_id, token_id, channel_id,
	workspace, agent, summary, approval_id, granted_by, created_at, expires_at`

// AddGrant stores g.
func (s *Store) AddGrant(ctx context.Context, g grant.Grant) error {
	_, err := s.db.SQL().ExecContext(ctx, `INSERT INTO grants (`+columns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, values(g, g.CreatedAt.UnixMilli(), g.ExpiresAt.UnixMilli())...)
	if err != nil {
		return fmt.Errorf("grants: add %s: %w", g.ID, err)
	}
	return nil
}

// RevokeGrant deletes the grant with id and returns it; grant.ErrNotFound
// when there is none.
func (s *Store) RevokeGrant(ctx context.Context, id string) (grant.Grant, error) {
	row := s.db.SQL().QueryRowContext(ctx, `DELETE FROM grants WHERE id = ? RETURNING `+columns, id)
	g, err := scan(row)
	if errors.Is(err, sql.ErrNoRows) {
		return grant.Grant{}, fmt.Errorf("%w: %s", grant.ErrNotFound, id)
	}
	if err != nil {
		return grant.Grant{}, fmt.Errorf("grants: revoke %s: %w", id, err)
	}
	return g, nil
}

// LiveGrants lists the grants that expire after now, oldest first, and
// deletes the expired ones (they decide nothing anyway).
func (s *Store) LiveGrants(ctx context.Context, now time.Time) ([]grant.Grant, error) {
	ms := now.UnixMilli()
	if _, err := s.db.SQL().ExecContext(ctx, `DELETE FROM grants WHERE expires_at <= ?`, ms); err != nil {
		return nil, fmt.Errorf("grants: sweep: %w", err)
	}
	rows, err := s.db.SQL().QueryContext(ctx, `SELECT `+columns+` FROM grants WHERE expires_at > ?
		ORDER BY created_at, id`, ms)
	if err != nil {
		return nil, fmt.Errorf("grants: list: %w", err)
	}
	defer rows.Close()
	var out []grant.Grant
	for rows.Next() {
		g, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("grants: list: %w", err)
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// WatchGrants waits for ctx to end: on one server the Book reloads after
// its own writes, and no one else writes this file.
func (s *Store) WatchGrants(ctx context.Context, changed func()) error {
	<-ctx.Done()
	return ctx.Err()
}

// values are g's columns in columns' order, with the two times as the
// backend stores them (unix milliseconds here, timestamptz in PostgreSQL).
func values(g grant.Grant, created, expires any) []any {
	return []any{g.ID, g.ToolName, string(g.Scope), g.MatchType, g.Pattern, g.ArgsDigest, g.SessionID, g.TokenID, g.ChannelID,
		g.Workspace, g.Agent, g.Summary, g.ApprovalID, g.GrantedBy, created, expires}
}

type scanner interface{ Scan(dest ...any) error }

// scan reads one row of columns from grants.db, whose times are unix
// milliseconds.
func scan(r scanner) (grant.Grant, error) {
	var created, expires int64
	g, err := scanWith(r, &created, &expires)
	g.CreatedAt, g.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
	return g, err
}

// scanWith reads one row of columns, the two times into created and
// expires, whose types differ by backend.
func scanWith(r scanner, created, expires any) (grant.Grant, error) {
	var g grant.Grant
	var scope string
	err := r.Scan(&g.ID, &g.ToolName, &scope, &g.MatchType, &g.Pattern, &g.ArgsDigest, &g.SessionID, &g.TokenID, &g.ChannelID,
		&g.Workspace, &g.Agent, &g.Summary, &g.ApprovalID, &g.GrantedBy, created, expires)
	g.Scope = grant.Scope(scope)
	return g, err
}
