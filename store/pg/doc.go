// Package pg is toolgate's PostgreSQL connection layer, the twin of
// store/sqlite: the shared database that lets several replicas behind a
// load balancer act as one service (docs/operations.md#several-replicas).
//
// It owns: the connection pool and the classification of "the server cannot
// be reached" errors as ErrUnavailable (db.go); the transaction an approval's
// answer encloses the writes of other stores in (Enclose, Beginner:
// enclosing.go); the schema, one ordered list of every part's steps, run once
// per database under an advisory lock (schema.go, migrate.go); the one
// LISTEN connection per process that fans change notifications out to
// subscribers and resynchronises them after every reconnect (listen.go);
// and what a text value must be for the server to take it (Text).
//
// It owns no resource: each one's PostgreSQL store sits beside its other
// backend and uses the DB, MigrateParts and the Listener: the policy
// document in store (PGBackend), tokens and sessions in store/auth, the
// decision log in store/decisionlog, the approval history in store/history,
// grants in store/grants, and the shared pending asks in store/asks. It
// imports none of them.
//
// Decisions never wait for the database: every replica keeps the compiled
// policy and the token list in memory and refreshes them on notification.
package pg
