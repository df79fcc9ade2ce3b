package approval

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/txn"
)

// Shared mode: the Manager keeps a mirror of the shared store's pending asks
// (so List, Get and the hub's hello stay in memory), fed by the store's
// notifications and reloaded after each reconnect. The store decides every
// outcome; the mirror only applies what the store says, and a final state in
// the mirror never goes back to pending.

// sharedAsks keeps the asks in a Shared store. It is the Manager (whose
// mirror, locks and events it works on) with the listener's and the
// sweep's life.
type sharedAsks struct {
	*Manager
	store      Shared
	ctx        context.Context
	stop       context.CancelFunc
	listenDone chan struct{}
	sweepTimer Timer // guarded by mu
	needResync atomic.Bool
	// opening holds the ids this Manager is inserting, so that its
	// EventRequested is Local whichever path publishes it (guarded by mu).
	opening map[string]bool
}

var _ asks = (*sharedAsks)(nil)

// startShared starts the notification listener and the sweep loop of m
// over store.
func startShared(mgr *Manager, store Shared) *sharedAsks {
	m := &sharedAsks{Manager: mgr, store: store, opening: make(map[string]bool), listenDone: make(chan struct{})}
	m.ctx, m.stop = context.WithCancel(context.Background())
	go func() {
		defer close(m.listenDone)
		err := m.store.Listen(m.ctx, Notify{Changed: m.applyNotice, Resync: m.resync})
		if err != nil && !errors.Is(err, context.Canceled) {
			m.log.Warn("approval: shared listener stopped", "err", err)
		}
	}()
	m.scheduleSweep()
	return m
}

// create stores a new ask, or joins an identical pending one opened
// through any replica.
func (m *sharedAsks) create(ctx context.Context, req engine.Request, d engine.Decision, sessionID, agent, key string) (Approval, bool, error) {
	e := m.newEntry(req, d, sessionID, agent, "")
	e.a.CreatedAt, e.a.ExpiresAt = storeTime(e.a.CreatedAt), storeTime(e.a.ExpiresAt)
	m.mu.Lock()
	closed := m.closed
	m.opening[e.a.ID] = true
	m.mu.Unlock()
	if closed {
		return Approval{}, false, ErrClosed
	}
	a, joined, err := m.store.Insert(ctx, e.a, key)
	m.mu.Lock()
	defer m.mu.Unlock()
	defer delete(m.opening, e.a.ID) // after the publish below
	if err != nil {
		return Approval{}, false, fmt.Errorf("approval: open an ask: %w", err)
	}
	if m.closed {
		return Approval{}, false, ErrClosed
	}
	if joined || m.byID[a.ID] != nil {
		// A join, or our own ask whose notification came first.
		return m.applyLocked(a).a, joined, nil
	}
	e.a = a
	m.byID[a.ID] = e
	m.publishLocked(EventRequested, a)
	m.record(a)
	return a, false, nil
}

// find fetches an ask this replica has not heard of and mirrors it.
func (m *sharedAsks) find(id string) (*entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedCallTimeout)
	defer cancel()
	a, err := m.store.Get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("approval: look up %s: %w", id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.applyLocked(a), nil
}

// decide asks the store to record the answer; the store says who won.
// The caller holds e.decideMu, which keeps this replica's own answers to one
// ask in line; the store's row lock does the same across replicas, and the
// Persister runs under it, so always-allow is written only by the winner.
func (m *sharedAsks) decide(ctx context.Context, e *entry, cur Approval, ans answer) (Approval, error) {
	choice, ttl, principal, comment := ans.choice, ans.ttl, ans.by, ans.comment
	var prepare func(context.Context, Approval) (*policy.Override, error)
	var made *grant.Grant
	joined := false // the grant was stored in the answer's own transaction
	switch {
	case choice == ChoiceAllowAlways:
		if m.opts.Persister == nil {
			return cur, ErrNoPersister
		}
		req := e.req
		prepare = func(ctx context.Context, _ Approval) (*policy.Override, error) { return m.persist(ctx, req, principal) }
	case choice.Scoped():
		// The grant is made under the store's row lock, by the winner only.
		prepare = func(ctx context.Context, a Approval) (*policy.Override, error) {
			g, err := m.opts.Granter.Grant(ctx, a, choice, ttl, principal)
			if err != nil {
				return nil, fmt.Errorf("approval: grant: %w", err)
			}
			made = &g
			enc := txn.Of(ctx)
			joined = enc != nil && enc.Joined()
			return nil, nil
		}
	}
	out := Outcome{Status: statusOf(choice), Choice: choice, DecidedBy: principal, Comment: comment, DecidedAt: m.sharedNow()}
	a, err := m.resolveShared(ctx, e, out, prepare)
	if made == nil {
		return a, err
	}
	if err != nil {
		// The answer did not stand (storing it failed after the grant was
		// made): the grant must not outlive it. A grant stored in the
		// answer's own transaction went with it; one stored in a
		// transaction of its own is taken back.
		if joined {
			return a, err
		}
		if rerr := m.opts.Granter.RevokeGrant(context.WithoutCancel(ctx), made.ID); rerr != nil {
			m.log.Warn("approval: a grant whose answer failed could not be taken back", "grant", made.ID, "err", rerr)
		}
		return a, err
	}
	m.mu.Lock()
	e.a.Grant = made
	m.mu.Unlock()
	a.Grant = made
	m.record(a) // the stored answer had no grant yet; the history adds it
	return a, nil
}

// cancel ends a pending ask as cancelled in the store.
func (m *sharedAsks) cancel(e *entry, principal, reason string) (Approval, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedCallTimeout)
	defer cancel()
	out := Outcome{Status: StatusCancelled, DecidedBy: principal, Comment: reason, DecidedAt: m.sharedNow()}
	return m.resolveShared(ctx, e, out, nil)
}

// resolveShared stores an outcome and mirrors the store's answer: the new
// state when this call won (recorded in History here, by the replica that
// made the change), the winner's state and ErrAlreadyDecided when it lost.
func (m *sharedAsks) resolveShared(ctx context.Context, e *entry, out Outcome, prepare func(context.Context, Approval) (*policy.Override, error)) (Approval, error) {
	id := m.snapshot(e).ID // e.a is written under mu
	a, err := m.store.Resolve(ctx, id, out, prepare)
	won := err == nil
	if !won && !errors.Is(err, ErrAlreadyDecided) {
		return m.snapshot(e), fmt.Errorf("approval: answer %s: %w", id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if a.ID == id {
		m.applyLocked(a)
	}
	// An answer that came after the deadline lost to expiry, and this call
	// stored that expiry (at this call's time): record it here too.
	if won || a.DecidedAt != nil && a.DecidedAt.Equal(out.DecidedAt) {
		m.record(a)
	}
	if won {
		return a, nil
	}
	return e.a, ErrAlreadyDecided
}

// sharedNow is the clock's time as the shared store keeps it: to the
// microsecond, in UTC, so every replica sees the same instant.
func (m *sharedAsks) sharedNow() time.Time { return storeTime(m.clock.Now()) }

func storeTime(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

// applyNotice mirrors a change the store reported.
func (m *sharedAsks) applyNotice(a Approval) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.applyLocked(a)
	}
}

// applyLocked mirrors the stored state a: a new pending ask is added and
// published, a resolution of a pending one finishes it (waking its
// waiters), and anything else at most updates the join count. It takes no
// decideMu: the store has already decided, and applying its verdict twice is
// harmless. Callers hold m.mu.
func (m *sharedAsks) applyLocked(a Approval) *entry {
	e, ok := m.byID[a.ID]
	if !ok {
		e = &entry{a: a, req: requestOf(a), done: make(chan struct{})}
		m.byID[a.ID] = e
		if a.Pending() {
			m.publishLocked(EventRequested, a)
		} else {
			close(e.done) // never seen here as pending: nothing to announce
			id := a.ID
			m.clock.AfterFunc(m.opts.Retention, func() { m.forget(id) })
		}
		return e
	}
	switch {
	case !e.a.Pending():
	case a.Pending():
		e.a.Joins = max(e.a.Joins, a.Joins)
	default:
		m.finishLocked(e, a)
	}
	return e
}

// requestOf rebuilds the engine request of an ask another replica opened,
// for the Persister (asks are never owner-scope calls, so no Scope).
func requestOf(a Approval) engine.Request {
	return engine.Request{Call: a.Request.Call(),
		ChannelID: a.Request.ChannelID, Workspace: a.Request.Workspace}
}

// resync reloads the pending asks after the notification channel
// (re)connected: new ones are added, and every mirrored pending ask the
// store no longer holds as pending gets its stored outcome.
func (m *sharedAsks) resync() {
	ctx, cancel := context.WithTimeout(m.ctx, sharedCallTimeout)
	defer cancel()
	list, err := m.store.Pending(ctx)
	if err != nil {
		m.needResync.Store(true) // the sweep tries again
		m.log.Warn("approval: resync from the shared store failed", "err", err)
		return
	}
	m.needResync.Store(false)
	seen := make(map[string]bool, len(list))
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	for _, a := range list {
		seen[a.ID] = true
		m.applyLocked(a)
	}
	var gone []string
	for id, e := range m.byID {
		if e.a.Pending() && !seen[id] {
			gone = append(gone, id)
		}
	}
	m.mu.Unlock()
	for _, id := range gone {
		m.refresh(ctx, id)
	}
}

// refresh mirrors the stored state of one ask; one the store no longer has
// at all ends here as cancelled. When the store cannot tell (any other
// error), the next sweep resyncs again: the ask was answered or ended
// elsewhere while this replica was not listening, and its waiters would
// otherwise hear of it only one sweep past its deadline.
func (m *sharedAsks) refresh(ctx context.Context, id string) {
	a, err := m.store.Get(ctx, id)
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.byID[id]
	switch {
	case e == nil:
	case err == nil:
		m.applyLocked(a)
	case !errors.Is(err, ErrNotFound):
		if e.a.Pending() && !m.closed {
			m.needResync.Store(true)
			m.log.Warn("approval: refreshing an ask from the shared store failed; retrying at the next sweep", "id", id, "err", err)
		}
	case e.a.Pending():
		out := Outcome{Status: StatusCancelled, DecidedBy: PrincipalSystem, Comment: "the shared store no longer holds this ask", DecidedAt: m.sharedNow()}
		m.finishLocked(e, out.Apply(e.a, nil))
	}
}

func (m *sharedAsks) scheduleSweep() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.sweepTimer = m.clock.AfterFunc(m.opts.SweepInterval, m.sweep)
	}
}

// sweep runs expiry (the store lets one replica at a time do it), then ends
// every mirrored ask one interval past its deadline that is still pending
// here: with the store's expiry when it answers, locally when it cannot be
// reached, so that a wait ends by its deadline even without the database.
func (m *sharedAsks) sweep() {
	defer m.scheduleSweep()
	if m.needResync.Load() {
		m.resync()
	}
	ctx, cancel := context.WithTimeout(m.ctx, sharedCallTimeout)
	defer cancel()
	now := m.sharedNow()
	expired, err := m.store.ExpireDue(ctx, now, m.opts.Retention)
	if err != nil && m.ctx.Err() == nil {
		m.log.Warn("approval: expiry in the shared store failed", "err", err)
	}
	m.mu.Lock()
	for _, a := range expired {
		m.applyLocked(a)
		m.record(a)
	}
	var overdue []*entry
	for _, e := range m.byID {
		if e.a.Pending() && !e.a.ExpiresAt.Add(m.opts.SweepInterval).After(now) {
			overdue = append(overdue, e)
		}
	}
	m.mu.Unlock()
	for _, e := range overdue {
		m.expireOverdue(ctx, e, now)
	}
}

// expireOverdue expires one overdue ask in the store, or only here when the
// store cannot be reached (fail closed: its deadline has passed).
func (m *sharedAsks) expireOverdue(ctx context.Context, e *entry, now time.Time) {
	out := Outcome{Status: StatusExpired, DecidedBy: PrincipalSystem, Comment: "no answer before the timeout", DecidedAt: now}
	if _, err := m.resolveShared(ctx, e, out, nil); err == nil || errors.Is(err, ErrAlreadyDecided) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.a.Pending() {
		out.Comment = "no answer before the timeout (the shared store could not be reached)"
		m.finishLocked(e, out.Apply(e.a, nil))
	}
}

// close stops the listener and the sweep, and wakes this process's
// waiters with a cancelled answer. The asks stay pending in the store:
// another replica's browsers can still answer them, and an agent that
// retries through another replica joins its ask.
func (m *sharedAsks) close() {
	m.stop()
	m.mu.Lock()
	if m.sweepTimer != nil {
		m.sweepTimer.Stop()
	}
	now := m.sharedNow()
	for _, e := range m.byID {
		if e.a.Pending() {
			out := Outcome{Status: StatusCancelled, DecidedBy: PrincipalSystem, Comment: "server shutting down", DecidedAt: now}
			m.finishLocked(e, out.Apply(e.a, nil))
		}
	}
	m.mu.Unlock()
	select {
	case <-m.listenDone:
	case <-time.After(5 * time.Second):
		m.log.Warn("approval: shared listener did not stop in time")
	}
}

// local: an event is this process's while it inserts the ask.
func (m *sharedAsks) local(id string) bool { return m.opening[id] }

// recoverHistory closes nothing: a pending ask may belong to another
// replica that is alive; expiry closes those whose replica is gone.
func (m *sharedAsks) recoverHistory(context.Context) (int, error) { return 0, nil }
