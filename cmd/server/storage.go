package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/asks"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/decisionlog"
	"github.com/toolgate/toolgate/store/grants"
	"github.com/toolgate/toolgate/store/history"
	"github.com/toolgate/toolgate/store/pg"
)

// databaseURLEnv names the database when no --database-url flag is given.
const databaseURLEnv = "TOOLGATE_DATABASE_URL"

// readyTimeout bounds the database ping of one /readyz; listenWait the
// start's wait for the notification connection.
const (
	readyTimeout = 2 * time.Second
	listenWait   = 5 * time.Second
)

// tokenStore is what the server needs of its tokens; *auth.Tokens (files)
// and *auth.PGTokens are.
type tokenStore interface {
	service.TokenStore
	Active(tokenID string) bool
	OnRevoke(f func())
}

// decisionStore is the decision log; *decisionlog.Log (SQLite) and
// *decisionlog.PGLog are.
type decisionStore interface {
	service.DecisionLog
	LevelSeries(ctx context.Context, q decisionlog.Query, n int) ([]decisionlog.LevelBucket, error)
	Dropped() uint64
	QueueLen() int
	Close() error
}

// storage are the stored parts of the server: in the config dir (config.yaml
// and SQLite), or in PostgreSQL, shared by every replica (--database-url).
type storage struct {
	// policy is the policy document store; its Backend (config.yaml, or
	// the database's row) is what the export route reads.
	policy   *inforce.Holder
	tokens   tokenStore
	sessions auth.SessionStore
	history  approval.History
	// decisions is nil when --decision-log=false.
	decisions decisionStore
	// shared holds pending asks across replicas; nil: in this process.
	shared approval.Shared
	// grants keeps the grants (docs/grants.md): grants.db, or the database.
	grants grant.Store
	// ready says whether the shared database answers (/readyz); nil for
	// the config dir.
	ready func(ctx context.Context) error
}

// openStorage opens the storage the flags ask for; what it opened is
// closed through a even when it fails halfway.
func openStorage(ctx context.Context, c config, dir string, a *app, log *slog.Logger) (*storage, error) {
	opts := inforce.Options{Workspace: c.workspace, Logger: log}
	if c.databaseURL != "" {
		return openPostgres(ctx, c, dir, opts, a, log)
	}
	return openFiles(c, dir, opts, a, log)
}

// openFiles is the embedded default: config.yaml, tokens and SQLite files
// in the config dir.
func openFiles(c config, dir string, opts inforce.Options, a *app, log *slog.Logger) (*storage, error) {
	st, err := inforce.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	a.onClose("policy store", st.Close)
	// A file backend never becomes unreachable: no readiness check.
	s := &storage{policy: st, sessions: auth.NewMemorySessions(nil)}
	tokens, created, err := auth.OpenTokens(dir)
	if err != nil {
		return nil, err
	}
	s.tokens = tokens
	logCreatedToken(log, dir, created)
	hist, err := history.Open(filepath.Join(dir, history.File))
	if err != nil {
		return nil, err
	}
	a.onClose("approval history", hist.Close)
	s.history = hist
	gs, err := grants.Open(filepath.Join(dir, grants.File))
	if err != nil {
		return nil, err
	}
	a.onClose("grants", gs.Close)
	s.grants = gs
	if c.decisionLog {
		dl, err := decisionlog.Open(filepath.Join(dir, decisionlog.File), decisionlog.Options{Retention: c.logRetention, MaxRows: c.logMaxRows, Logger: log})
		if err != nil {
			return nil, err
		}
		a.onClose("decision log", dl.Close)
		s.decisions = dl
	}
	return s, nil
}

// openPostgres opens the database, runs each part's migrations, imports
// the config dir's config.yaml into an empty database and opens every
// stored part there. The config dir then holds only api_token.
func openPostgres(ctx context.Context, c config, dir string, opts inforce.Options, a *app, log *slog.Logger) (*storage, error) {
	db, err := pg.Open(ctx, c.databaseURL, pg.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("--database-url: %w", err)
	}
	a.onClose("database", func() error { db.Close(); return nil })
	doc, err := store.OpenPGBackend(ctx, db)
	if err != nil {
		return nil, err
	}
	if imported, err := doc.Import(ctx, dir); err != nil {
		return nil, err
	} else if imported {
		log.Info("imported the policy into the empty database", "from", dir)
	}
	st, err := inforce.OpenBackend(ctx, doc, opts)
	if err != nil {
		return nil, err
	}
	a.onClose("policy store", st.Close)
	s := &storage{policy: st, ready: func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, readyTimeout)
		defer cancel()
		return errors.Join(db.Ping(ctx), listening(db), st.Health())
	}}
	tokens, created, err := auth.OpenPGTokens(ctx, db, dir)
	if err != nil {
		return nil, err
	}
	s.tokens = tokens
	logCreatedToken(log, dir, created)
	if s.sessions, err = auth.OpenPGSessions(ctx, db); err != nil {
		return nil, err
	}
	if s.history, err = history.OpenPG(ctx, db); err != nil {
		return nil, err
	}
	if s.shared, err = asks.OpenApprovals(ctx, db); err != nil {
		return nil, err
	}
	if s.grants, err = grants.OpenPG(ctx, db); err != nil {
		return nil, err
	}
	if c.decisionLog {
		dl, err := decisionlog.OpenPG(ctx, db, decisionlog.PGOptions{Options: decisionlog.Options{
			Retention: c.logRetention, MaxRows: c.logMaxRows, Logger: log}})
		if err != nil {
			return nil, err
		}
		a.onClose("decision log", dl.Close)
		s.decisions = dl
	}
	waitListening(ctx, db, log)
	log.Info("shared state in PostgreSQL", "config_dir", dir)
	return s, nil
}

// errDeaf is /readyz's problem while the notification connection is down:
// the replica then hears of no edit, answer or revocation made through
// another one, even when its pool still answers.
var errDeaf = fmt.Errorf("not listening for other replicas' changes (reconnecting): %w", store.ErrUnavailable)

func listening(db *pg.DB) error {
	if db.Listener().Connected() {
		return nil
	}
	return errDeaf
}

// waitListening waits (a few seconds at most) for the notification
// connection, so that a replica is ready when it starts serving.
func waitListening(ctx context.Context, db *pg.DB, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, listenWait)
	defer cancel()
	if !db.Listener().WaitConnected(ctx) {
		log.Warn("serving before the database listener connected; /readyz fails until it does")
	}
}

func logCreatedToken(log *slog.Logger, dir string, created bool) {
	if created {
		log.Info("created the admin token", "file", filepath.Join(dir, auth.AdminTokenFile))
	}
}
