package pg

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/txn"
)

// enclosingTx is the Tx of a txn.Enclosing begun on a DB (an approval's
// answer, in the shared approvals' Resolve).
type enclosingTx struct {
	db *DB
	tx pgx.Tx
}

// Enclose makes tx, a transaction on db, the one that the writes of the
// stores below it join (Beginner): put it in their context with txn.With.
func (db *DB) Enclose(tx pgx.Tx) *txn.Enclosing {
	return &txn.Enclosing{Tx: &enclosingTx{db: db, tx: tx}}
}

// Beginner is what a store's write begins its transaction on: the
// enclosing transaction ctx carries when it is one of db's (Enclose), so
// that the write is a savepoint in it and commits with it (the Enclosing
// is told it was joined), else db's pool.
func (db *DB) Beginner(ctx context.Context) interface {
	Begin(context.Context) (pgx.Tx, error)
} {
	if enc := txn.Of(ctx); enc != nil {
		if in, ok := enc.Tx.(*enclosingTx); ok && in.db == db {
			enc.Join()
			return in.tx
		}
	}
	return db.pool
}
