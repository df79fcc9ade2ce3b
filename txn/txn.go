// Package txn is the handshake between the owner of a database transaction
// and the stores that may write inside it, so that several writes commit
// together or not at all: on PostgreSQL, an approval's answer with the
// "always allow" rule or the grant it makes. It owns the Enclosing value
// carried in a context; it does not know any database, and the stores that
// join (the PostgreSQL stores, on store/pg) keep their transaction's type to themselves.
package txn

import (
	"context"
	"sync"

	"github.com/toolgate/toolgate/internal/callbacks"
)

// Enclosing is a transaction that a write may join, so that the write
// commits with it or not at all: on PostgreSQL an approval's answer and
// the "always allow" rule or the grant it makes are stored in one
// transaction
// (docs/operations.md#an-always-allow-answer-and-its-rule-commit-together).
//
// Its owner begins the transaction, puts an Enclosing in the context it
// hands down (With), and calls Committed once the transaction committed,
// or nothing when it did not. A store that can write inside Tx does so and
// calls Join; what it keeps in memory about the write (the policy in
// force, the live grants) it updates only in AfterCommit, so that a write
// that was never committed never decides. A store that cannot (another
// database, a file) ignores the Enclosing and commits on its own.
type Enclosing struct {
	// Tx is the owner's transaction, for the store that knows its type;
	// no other looks inside.
	Tx any

	mu     sync.Mutex
	joined bool
	after  callbacks.List
}

type enclosingKey struct{}

// With returns ctx carrying e.
func With(ctx context.Context, e *Enclosing) context.Context {
	return context.WithValue(ctx, enclosingKey{}, e)
}

// Of returns the Enclosing ctx carries, or nil.
func Of(ctx context.Context) *Enclosing {
	e, _ := ctx.Value(enclosingKey{}).(*Enclosing)
	return e
}

// Join records that a store wrote inside e.Tx: what it wrote is stored
// only when the owner commits.
func (e *Enclosing) Join() {
	e.mu.Lock()
	e.joined = true
	e.mu.Unlock()
}

// Joined reports whether a store wrote inside e.Tx.
func (e *Enclosing) Joined() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.joined
}

// AfterCommit queues fn for Committed.
func (e *Enclosing) AfterCommit(fn func()) { e.after.Add(fn) }

// Committed runs, in order and once, what waited for the owner's commit.
// The owner calls it after the transaction committed, never otherwise.
func (e *Enclosing) Committed() { e.after.CallOnce() }
