package pg

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/txn"
)

// enclosingTx is the Tx of a txn.Enclosing this package begins (an
// approval's answer, in Approvals.Resolve).
type enclosingTx struct {
	db *DB
	tx pgx.Tx
}

// beginner is what a write of this package begins its transaction on: the
// enclosing transaction ctx carries when it is one of db's, so that the
// write is a savepoint in it and commits with it (the Enclosing is told it
// was joined), else db's pool.
func (db *DB) beginner(ctx context.Context) interface {
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
