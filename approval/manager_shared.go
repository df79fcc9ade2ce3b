package approval

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
)

// Shared mode: the Manager keeps a mirror of the shared store's pending asks
// (so List, Get and the hub's hello stay in memory), fed by the store's
// notifications and reloaded after each reconnect. The store decides every
// outcome; the mirror only applies what the store says, and a final state in
// the mirror never goes back to pending.

// startShared starts the notification listener and the sweep loop.
func (m *Manager) startShared() {
	m.ctx, m.stop = context.WithCancel(context.Background())
	m.opening = make(map[string]bool)
	m.listenDone = make(chan struct{})
	go func() {
		defer close(m.listenDone)
		err := m.opts.Shared.Listen(m.ctx, Notify{Changed: m.applyNotice, Resync: m.resync})
		if err != nil && !errors.Is(err, context.Canceled) {
			m.log.Warn("approval: shared listener stopped", "err", err)
		}
	}()
	m.scheduleSweep()
}

// createShared stores a new ask, or joins an identical pending one opened
// through any replica.
func (m *Manager) createShared(ctx context.Context, req engine.Request, d engine.Decision, sessionID, agent, key string) (Approval, bool, error) {
	e := m.newEntry(req, d, sessionID, agent, "")
	e.a.CreatedAt, e.a.ExpiresAt = storeTime(e.a.CreatedAt), storeTime(e.a.ExpiresAt)
	m.mu.Lock()
	closed := m.closed
	m.opening[e.a.ID] = true
	m.mu.Unlock()
	if closed {
		return Approval{}, false, ErrClosed
	}
	a, joined, err := m.opts.Shared.Insert(ctx, e.a, key)
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

// lookupShared fetches an ask this replica has not heard of and mirrors it.
func (m *Manager) lookupShared(id string) (*entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedCallTimeout)
	defer cancel()
	a, err := m.opts.Shared.Get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("approval: look up %s: %w", id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.applyLocked(a), nil
}

// decideShared asks the store to record the answer; the store says who won.
// The caller holds e.decideMu, which keeps this replica's own answers to one
// ask in line; the store's row lock does the same across replicas, and the
// Persister runs under it, so always-allow is written only by the winner.
func (m *Manager) decideShared(ctx context.Context, e *entry, choice Choice, ttl time.Duration, principal, comment string) (Approval, error) {
	cur := m.snapshot(e)
	var prepare func(Approval) (map[string]any, error)
	var made *grant.Grant
	switch {
	case choice == ChoiceAllowAlways:
		if m.opts.Persister == nil {
			return cur, ErrNoPersister
		}
		req := e.req
		prepare = func(Approval) (map[string]any, error) { return m.persist(req, principal) }
	case choice.Scoped():
		// The grant is made under the store's row lock, by the winner only.
		prepare = func(a Approval) (map[string]any, error) {
			g, err := m.opts.Granter.Grant(ctx, a, choice, ttl, principal)
			if err != nil {
				return nil, fmt.Errorf("approval: grant: %w", err)
			}
			made = &g
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
		// made): the grant must not outlive it.
		if rerr := m.opts.Granter.RevokeGrant(context.WithoutCancel(ctx), made.ID); rerr != nil {
			m.log.Warn("approval: a grant whose answer failed could not be taken back", "grant", made.ID, "err", rerr)
		}
		return a, err
	}
	m.mu.Lock()
	e.a.Grant = made
	m.mu.Unlock()
	a.Grant = made
	return a, nil
}

// cancelShared ends a pending ask as cancelled in the store.
func (m *Manager) cancelShared(e *entry, principal, reason string) (Approval, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedCallTimeout)
	defer cancel()
	out := Outcome{Status: StatusCancelled, DecidedBy: principal, Comment: reason, DecidedAt: m.sharedNow()}
	return m.resolveShared(ctx, e, out, nil)
}

// resolveShared stores an outcome and mirrors the store's answer: the new
// state when this call won (recorded in History here, by the replica that
// made the change), the winner's state and ErrAlreadyDecided when it lost.
func (m *Manager) resolveShared(ctx context.Context, e *entry, out Outcome, prepare func(Approval) (map[string]any, error)) (Approval, error) {
	id := m.snapshot(e).ID // e.a is written under mu
	a, err := m.opts.Shared.Resolve(ctx, id, out, prepare)
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
func (m *Manager) sharedNow() time.Time { return storeTime(m.clock.Now()) }

func storeTime(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

// applyNotice mirrors a change the store reported.
func (m *Manager) applyNotice(a Approval) {
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
func (m *Manager) applyLocked(a Approval) *entry {
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
	return engine.Request{ToolName: a.Request.ToolName, ToolArgs: a.Request.ToolArgs,
		ChannelID: a.Request.ChannelID, Workspace: a.Request.Workspace}
}

// resync reloads the pending asks after the notification channel
// (re)connected: new ones are added, and every mirrored pending ask the
// store no longer holds as pending gets its stored outcome.
func (m *Manager) resync() {
	ctx, cancel := context.WithTimeout(m.ctx, sharedCallTimeout)
	defer cancel()
	list, err := m.opts.Shared.Pending(ctx)
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
func (m *Manager) refresh(ctx context.Context, id string) {
	a, err := m.opts.Shared.Get(ctx, id)
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

func (m *Manager) scheduleSweep() {
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
func (m *Manager) sweep() {
	defer m.scheduleSweep()
	if m.needResync.Load() {
		m.resync()
	}
	ctx, cancel := context.WithTimeout(m.ctx, sharedCallTimeout)
	defer cancel()
	now := m.sharedNow()
	expired, err := m.opts.Shared.ExpireDue(ctx, now, m.opts.Retention)
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
func (m *Manager) expireOverdue(ctx context.Context, e *entry, now time.Time) {
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

// shutdownShared stops the listener and the sweep, and wakes this
// process's waiters with a cancelled answer. The asks stay pending in the
// store: another replica's browsers can still answer them, and an agent that
// retries through another replica joins its ask.
func (m *Manager) shutdownShared() {
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
	m.endSubscribersLocked()
	m.mu.Unlock()
	select {
	case <-m.listenDone:
	case <-time.After(5 * time.Second):
		m.log.Warn("approval: shared listener did not stop in time")
	}
	if m.hist != nil {
		m.hist.wait(5 * time.Second)
	}
}
