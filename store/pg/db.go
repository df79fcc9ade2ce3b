package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrUnavailable is wrapped by every error that means the database cannot
// be reached right now. ErrUnavailable is this error, so that the
// file stores and every door test one sentinel; it is defined here because
// store imports this package (its PostgreSQL backend), not the reverse.
var ErrUnavailable = errors.New("store: storage unavailable")

// DefaultOpTimeout bounds one database operation when Options.OpTimeout is
// zero: a server that does not answer within it counts as unreachable.
const DefaultOpTimeout = 5 * time.Second

// DefaultMaxConns is the pool size when neither Options nor the URL's
// pool_max_conns set one: pgxpool's own default (the number of CPUs, at
// least 4) is small for page loads, approvals and the decision log at once.
const DefaultMaxConns = 10

// Options tune Open. The zero value is ready to use.
type Options struct {
	// MaxConns caps the pool (0: the URL's pool_max_conns, else
	// DefaultMaxConns).
	MaxConns int32
	// OpTimeout bounds each operation (0: DefaultOpTimeout).
	OpTimeout time.Duration
	// Logger receives connection and listener events (nil: slog.Default()).
	Logger *slog.Logger
	// ApplicationName is shown in pg_stat_activity ("" : "toolgate").
	ApplicationName string
}

// DB is an open PostgreSQL database: a connection pool for queries and one
// Listener on a dedicated connection for notifications. It is safe for
// concurrent use.
type DB struct {
	pool      *pgxpool.Pool
	opTimeout time.Duration
	log       *slog.Logger
	listener  *Listener
	stop      context.CancelFunc
	done      chan struct{}
}

// Open connects to databaseURL (a postgres:// URL or key=value string),
// checks that the server answers and starts the process's Listener. An
// unreachable server is an error wrapping ErrUnavailable; a malformed
// URL is not.
func Open(ctx context.Context, databaseURL string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		// ParseConfigError redacts the password itself.
		return nil, fmt.Errorf("pg: database url: %w", err)
	}
	switch {
	case opts.MaxConns > 0:
		cfg.MaxConns = opts.MaxConns
	case !strings.Contains(databaseURL, "pool_max_conns"):
		cfg.MaxConns = DefaultMaxConns
	}
	name := opts.ApplicationName
	if name == "" {
		name = "toolgate"
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = name
	}
	db := &DB{opTimeout: opts.OpTimeout, log: opts.Logger, done: make(chan struct{})}
	if db.opTimeout <= 0 {
		db.opTimeout = DefaultOpTimeout
	}
	if db.log == nil {
		db.log = slog.Default()
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = db.opTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pg: %w", err)
	}
	db.pool = pool
	if err := db.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	lconf := cfg.ConnConfig.Copy()
	db.listener = newListener(lconf, db.log, db.opTimeout)
	lctx, stop := context.WithCancel(context.Background())
	db.stop = stop
	go func() {
		defer close(db.done)
		db.listener.run(lctx)
	}()
	return db, nil
}

// Close stops the Listener and closes every connection.
func (db *DB) Close() {
	db.stop()
	<-db.done
	db.pool.Close()
}

// Pool is the connection pool, for the parts of toolgate kept in other
// files (decision log, approvals) that issue their own queries.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Listener is the process's notification listener.
func (db *DB) Listener() *Listener { return db.listener }

// Ping checks that the server answers one query (for /readyz).
func (db *DB) Ping(ctx context.Context) error {
	octx, cancel := db.Op(ctx)
	defer cancel()
	_, err := db.pool.Exec(octx, "SELECT 1")
	return db.Wrap(ctx, err, "ping")
}

// Op derives the context of one operation: ctx bounded by the DB's
// OpTimeout. Pass the parent ctx to Wrap so that a timeout of the
// operation counts as unreachable and a cancelled caller does not.
func (db *DB) Op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, db.opTimeout)
}

// Wrap names what failed ("pg: what: err") and makes an error meaning the
// server cannot be reached wrap ErrUnavailable as well. parent is the
// caller's context (not the one from Op): when it is still live, a deadline
// hit inside the operation means the server did not answer in time.
func (db *DB) Wrap(parent context.Context, err error, what string) error {
	if err == nil {
		return nil
	}
	if Unreachable(err) || parent.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("pg: %s: %w: %w", what, ErrUnavailable, err)
	}
	return fmt.Errorf("pg: %s: %w", what, err)
}

// Unreachable reports whether err means the server cannot be reached or
// cannot serve right now: a failed connect, a broken or closed connection,
// a network error, or a server error of class 08 (connection exception),
// 57P01-57P03 (shutting down, starting up), class 53 (insufficient
// resources: too many connections, disk full, out of memory), 25006 (a
// read-only standby after a failover), 57014 or 55P03 (a statement the
// server cancelled itself: statement_timeout, lock_timeout or
// pg_cancel_backend; toolgate's own timeouts end the operation on the
// client side and never send a cancel request).
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch c := pgErr.Code; {
		case len(c) == 5 && (c[:2] == "08" || c[:2] == "53"), c == "57P01", c == "57P02", c == "57P03", c == "25006",
			c == "57014", c == "55P03":
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	// A context error is the caller's (Wrap tells an operation's own
	// timeout apart); context.DeadlineExceeded is also a net.Error.
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var netErr net.Error
	switch {
	case errors.As(err, &netErr):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, net.ErrClosed):
		return true
	}
	// pgconn marks a closed or busy connection as safe to retry.
	return pgconn.SafeToRetry(err)
}

// OpTimeout is how long one operation may take (Options.OpTimeout).
func (db *DB) OpTimeout() time.Duration { return db.opTimeout }

// Log is the logger of connection and listener events (Options.Logger).
func (db *DB) Log() *slog.Logger { return db.log }

// Done is closed when Close has stopped the Listener: a store's background
// retries end then.
func (db *DB) Done() <-chan struct{} { return db.done }
