package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/callbacks"
	"github.com/toolgate/toolgate/store/pg"
)

// PGSessions are browser sessions in PostgreSQL, a SessionStore shared
// by every replica: a browser signed in through one is known to all. A
// sign-out through any replica reaches the OnDelete hooks of all
// (pg.ChannelSessions). It is safe for concurrent use.
type PGSessions struct {
	db      *pg.DB
	deleted callbacks.List
}

var _ SessionStore = (*PGSessions)(nil)

// OpenPGSessions migrates pg.PartSessions and returns the store.
func OpenPGSessions(ctx context.Context, db *pg.DB) (*PGSessions, error) {
	if err := pg.MigrateParts(ctx, db, pg.PartSessions); err != nil {
		return nil, err
	}
	s := &PGSessions{db: db}
	// After a reconnect a sign-out may have been missed: the hooks then
	// re-check their sessions, as after a notification.
	db.Listener().Subscribe(pg.ChannelSessions, func(string) { s.tellDeleted() }, s.tellDeleted)
	return s, nil
}

func sessionKey(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
}

// Create starts a session for p lasting ttl, with a new random id and
// CSRF token, and drops sessions that have expired. Expiry is judged by
// the database's clock, the same for every replica.
func (s *PGSessions) Create(ctx context.Context, p Principal, ttl time.Duration) (string, Session, error) {
	id := NewSessionID()
	se := Session{Principal: p, CSRF: NewSessionID()}
	octx, cancel := s.db.Op(ctx)
	defer cancel()
	err := pgx.BeginFunc(octx, s.db.Pool(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(octx, "DELETE FROM auth_sessions WHERE expires <= now()"); err != nil {
			return err
		}
		return tx.QueryRow(octx, `INSERT INTO auth_sessions (id_hash, principal, csrf, expires)
			VALUES ($1, $2, $3, now() + make_interval(secs => $4)) RETURNING expires`,
			sessionKey(id), p, se.CSRF, ttl.Seconds()).Scan(&se.Expires)
	})
	if err != nil {
		return "", Session{}, s.db.Wrap(ctx, err, "create session")
	}
	return id, se, nil
}

// Get returns the live session id (ErrNoSession when there is none).
func (s *PGSessions) Get(ctx context.Context, id string) (Session, error) {
	octx, cancel := s.db.Op(ctx)
	defer cancel()
	var se Session
	err := s.db.Pool().QueryRow(octx, `SELECT principal, csrf, expires FROM auth_sessions
		WHERE id_hash = $1 AND expires > now()`, sessionKey(id)).Scan(&se.Principal, &se.CSRF, &se.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return Session{}, ErrNoSession
	}
	if err != nil {
		return Session{}, s.db.Wrap(ctx, err, "get session")
	}
	return se, nil
}

// Delete ends session id and tells every replica's OnDelete hooks; an
// unknown id is not an error (and tells nobody).
func (s *PGSessions) Delete(ctx context.Context, id string) error {
	octx, cancel := s.db.Op(ctx)
	defer cancel()
	err := pgx.BeginFunc(octx, s.db.Pool(), func(tx pgx.Tx) error {
		tag, err := tx.Exec(octx, "DELETE FROM auth_sessions WHERE id_hash = $1", sessionKey(id))
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = tx.Exec(octx, "SELECT pg_notify($1, 'delete')", pg.ChannelSessions)
		return err
	})
	return s.db.Wrap(ctx, err, "delete session")
}

// SetFlash keeps f for the session's next page (ErrNoSession).
func (s *PGSessions) SetFlash(ctx context.Context, id string, f Flash) error {
	octx, cancel := s.db.Op(ctx)
	defer cancel()
	tag, err := s.db.Pool().Exec(octx, `UPDATE auth_sessions SET flash_kind = $2, flash_text = $3
		WHERE id_hash = $1 AND expires > now()`, sessionKey(id), f.Kind, f.Text)
	if err != nil {
		return s.db.Wrap(ctx, err, "set flash")
	}
	if tag.RowsAffected() == 0 {
		return ErrNoSession
	}
	return nil
}

// TakeFlash returns and clears the session's message in one statement, so
// that two pages loading at once through two replicas do not both show it
// (ErrNoSession).
func (s *PGSessions) TakeFlash(ctx context.Context, id string) (Flash, error) {
	octx, cancel := s.db.Op(ctx)
	defer cancel()
	var f Flash
	err := s.db.Pool().QueryRow(octx, `WITH old AS (
			SELECT id_hash, flash_kind, flash_text FROM auth_sessions
			WHERE id_hash = $1 AND expires > now() FOR UPDATE)
		UPDATE auth_sessions s SET flash_kind = '', flash_text = '' FROM old
		WHERE s.id_hash = old.id_hash RETURNING old.flash_kind, old.flash_text`, sessionKey(id)).Scan(&f.Kind, &f.Text)
	if errors.Is(err, pgx.ErrNoRows) {
		return Flash{}, ErrNoSession
	}
	if err != nil {
		return Flash{}, s.db.Wrap(ctx, err, "take flash")
	}
	return f, nil
}

// OnDelete registers f to be called after a session is deleted through any
// replica, and after the Listener reconnects (a deletion may have been
// missed), from the Listener's goroutine: a websocket hub re-checks its
// sessions then.
func (s *PGSessions) OnDelete(f func()) { s.deleted.Add(f) }

func (s *PGSessions) tellDeleted() { s.deleted.Call() }
