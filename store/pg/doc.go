// Package pg keeps toolgate's shared state in PostgreSQL, so that several
// replicas behind a load balancer act as one service (docs/operations.md#several-replicas).
//
// It owns: the connection pool and the classification of "the server cannot
// be reached" errors as store.ErrUnavailable (db.go); schema migrations, run
// once per database under an advisory lock, each part with its own explicit
// list (migrate.go); the one LISTEN connection per process that fans change
// notifications out to subscribers and resynchronises them after every
// reconnect (listen.go); the policy document as a store.Backend (policy.go);
// the import of a config dir into an empty database and the export of the
// section as config.yaml (importexport.go); bearer tokens (tokens.go) and
// browser sessions (sessions.go). The decision log, approval history and
// shared approvals live beside them in files of their own owners and use the
// same DB, Migrate and Listener.
//
// Decisions never wait for the database: every replica keeps the compiled
// policy and the token list in memory and refreshes them on notification.
package pg
