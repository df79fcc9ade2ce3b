package store

import (
	"context"
	"sync"
)

// Enclosing is a transaction that a policy write may join, so that the
// write commits with it or not at all: on PostgreSQL an approval's answer
// and the "always allow" rule it writes are stored in one transaction
// (docs/operations.md#an-always-allow-answer-and-its-rule-commit-together).
//
// Its owner begins the transaction, puts an Enclosing in the context it
// hands down (WithEnclosing), and calls Committed once the transaction
// committed, or nothing when it did not. A Backend whose Update can write
// inside Tx calls Join; the Store then puts the written policy in force
// only in Committed, so a rule that was never committed never decides. A
// Backend that cannot (another database, a file) ignores it and commits on
// its own, as without one.
type Enclosing struct {
	// Tx is the owner's transaction, for the Backend that knows its type;
	// the Store does not look inside.
	Tx any

	mu     sync.Mutex
	joined bool
	after  []func()
}

type enclosingKey struct{}

// WithEnclosing returns ctx carrying e.
func WithEnclosing(ctx context.Context, e *Enclosing) context.Context {
	return context.WithValue(ctx, enclosingKey{}, e)
}

// EnclosingOf returns the Enclosing ctx carries, or nil.
func EnclosingOf(ctx context.Context) *Enclosing {
	e, _ := ctx.Value(enclosingKey{}).(*Enclosing)
	return e
}

// Join records that a Backend wrote inside e.Tx: what it wrote is stored
// only when the owner commits.
func (e *Enclosing) Join() {
	e.mu.Lock()
	e.joined = true
	e.mu.Unlock()
}

// Joined reports whether a Backend wrote inside e.Tx.
func (e *Enclosing) Joined() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.joined
}

// afterCommit queues fn for Committed.
func (e *Enclosing) afterCommit(fn func()) {
	e.mu.Lock()
	e.after = append(e.after, fn)
	e.mu.Unlock()
}

// Committed runs, in order and once, what waited for the owner's commit.
// The owner calls it after the transaction committed, never otherwise.
func (e *Enclosing) Committed() {
	e.mu.Lock()
	fns := e.after
	e.after = nil
	e.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
