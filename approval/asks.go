package approval

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/policy"
)

// asks is where a Manager keeps its pending asks and stores their
// outcomes: localAsks in this process alone, sharedAsks in a Shared store
// several replicas use (doc.go). Each implementation mirrors its asks in
// the Manager's byID, so Get, List and Wait read memory either way.
type asks interface {
	// create opens an ask, or joins the pending one with the same key (""
	// never joins).
	create(ctx context.Context, req engine.Request, d engine.Decision, sessionID, agent, key string) (Approval, bool, error)
	// find returns an ask the Manager has not seen, or ErrNotFound.
	find(id string) (*entry, error)
	// decide stores an answer to e, pending as cur when the Manager checked
	// the choice; the caller holds e.decideMu.
	decide(ctx context.Context, e *entry, cur Approval, ans answer) (Approval, error)
	// cancel ends e as cancelled; the caller holds e.decideMu.
	cancel(e *entry, principal, reason string) (Approval, error)
	// local reports whether an event about id is of this process's making
	// (Event.Local); the caller holds mu.
	local(id string) bool
	// close ends this process's waits at shutdown; the Manager has set
	// closed and then ends the subscriptions and the history.
	close()
	// recoverHistory cancels the asks a previous run left pending in the
	// History.
	recoverHistory(ctx context.Context) (int, error)
}

// answer is a person's answer to an ask.
type answer struct {
	choice  Choice
	ttl     time.Duration // allow_for only
	by      string
	comment string
}

// localAsks keeps the asks in this process: a timer per ask expires it,
// and the Manager's locks alone decide who answers first.
type localAsks struct{ *Manager }

var _ asks = localAsks{}

func (m localAsks) create(_ context.Context, req engine.Request, d engine.Decision, sessionID, agent, key string) (Approval, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Approval{}, false, ErrClosed
	}
	if e, ok := m.pending[key]; ok && key != "" {
		e.a.Joins++
		return e.a, true, nil
	}
	e := m.newEntry(req, d, sessionID, agent, key)
	m.byID[e.a.ID] = e
	if key != "" {
		m.pending[key] = e
	}
	e.timer = m.clock.AfterFunc(m.opts.Timeout, func() { m.expire(e) })
	m.publishLocked(EventRequested, e.a)
	m.record(e.a)
	return e.a, false, nil
}

// find: every ask of this process is in memory.
func (localAsks) find(string) (*entry, error) { return nil, ErrNotFound }

func (m localAsks) decide(ctx context.Context, e *entry, cur Approval, ans answer) (Approval, error) {
	var made *grant.Grant
	if ans.choice.Scoped() {
		g, err := m.opts.Granter.Grant(ctx, cur, ans.choice, ans.ttl, ans.by)
		if err != nil {
			return cur, fmt.Errorf("approval: grant: %w", err)
		}
		made = &g
	}
	var rule *policy.Override
	if ans.choice == ChoiceAllowAlways {
		var err error
		if rule, err = m.persist(ctx, e.req, ans.by); err != nil {
			return cur, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e.a.PersistedRule = rule
	e.a.Grant = made
	m.resolveLocked(e, statusOf(ans.choice), ans.choice, ans.by, ans.comment)
	return e.a, nil
}

func (m localAsks) cancel(e *entry, principal, reason string) (Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !e.a.Pending() {
		return e.a, ErrAlreadyDecided
	}
	m.resolveLocked(e, StatusCancelled, "", principal, reason)
	return e.a, nil
}

// local: every event is.
func (localAsks) local(string) bool { return true }

// close cancels every pending ask: no one else can answer it.
func (m localAsks) close() {
	m.mu.Lock()
	open := make([]*entry, 0, len(m.pending))
	for _, e := range m.byID {
		if e.a.Pending() {
			open = append(open, e)
		}
	}
	m.mu.Unlock()
	for _, e := range open {
		m.cancelForShutdown(e)
	}
}

func (m localAsks) cancelForShutdown(e *entry) {
	m.endBySystem(e, StatusCancelled, "server shutting down")
}

// expire is an ask's timer: unanswered, it becomes expired (deny).
func (m localAsks) expire(e *entry) {
	m.endBySystem(e, StatusExpired, "no answer before the timeout")
}

// endBySystem ends a still pending ask as status, in the system's name,
// behind any answer already under way.
func (m localAsks) endBySystem(e *entry, status Status, reason string) {
	e.decideMu.Lock()
	defer e.decideMu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.a.Pending() {
		m.resolveLocked(e, status, "", PrincipalSystem, reason)
	}
}

func (m localAsks) recoverHistory(ctx context.Context) (int, error) {
	if m.opts.History == nil {
		return 0, nil
	}
	stale, err := m.opts.History.PendingApprovals(ctx)
	if err != nil {
		return 0, fmt.Errorf("approval: load pending history: %w", err)
	}
	n := 0
	for _, a := range stale {
		m.mu.Lock()
		_, live := m.byID[a.ID]
		m.mu.Unlock()
		if live {
			continue
		}
		now := m.clock.Now()
		a.Status, a.DecidedAt, a.Decision = StatusCancelled, &now, DecisionDeny
		a.DecidedBy, a.Comment = PrincipalSystem, "server stopped before an answer"
		if err := m.opts.History.RecordApproval(ctx, a); err != nil {
			return n, fmt.Errorf("approval: record recovered %s: %w", a.ID, err)
		}
		n++
	}
	return n, nil
}
