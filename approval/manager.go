package approval

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/internal/defaults"
	"github.com/toolgate/toolgate/policy"
)

// Defaults of Options.
const (
	DefaultTimeout          = 300 * time.Second
	DefaultRetention        = 15 * time.Minute
	DefaultSubscriberBuffer = 256
	DefaultHistoryBuffer    = 1024
)

// Options configure a Manager. The zero value is usable.
type Options struct {
	// Timeout is how long an ask waits for an answer before it expires as
	// deny; DefaultTimeout when zero.
	Timeout time.Duration
	// Retention is how long a resolved approval stays in memory for Get and
	// Wait; DefaultRetention when zero.
	Retention time.Duration
	// Clock is the time source; RealClock when nil.
	Clock Clock
	// Persister handles allow_always; without it allow_always fails.
	Persister Persister
	// Granter makes the grants of allow_session and allow_for; without it
	// those choices fail with ErrNoGranter.
	Granter Granter
	// History, when set, records every approval and change.
	History History
	// HistoryBuffer is the capacity of the history queue.
	HistoryBuffer int
	// SubscriberBuffer is the channel capacity Subscribe gives.
	SubscriberBuffer int
	// Logger gets warnings (history failures); slog.Default when nil.
	Logger *slog.Logger
	// Shared, when set, holds the pending asks in a store several replicas
	// share (see Shared); nil keeps them in this process only.
	Shared Shared
	// SweepInterval is how often a shared-mode Manager runs expiry and
	// checks its overdue asks; DefaultSweepInterval when zero.
	SweepInterval time.Duration
}

// Stats are counters for metrics.
type Stats struct {
	Pending            int
	Subscribers        int
	SubscribersDropped uint64
	HistoryDropped     uint64
	HistoryErrors      uint64
}

// Manager owns the pending asks. It is safe for concurrent use.
type Manager struct {
	opts  Options
	clock Clock
	log   *slog.Logger

	mu        sync.Mutex // guards the fields below and every entry's a
	byID      map[string]*entry
	pending   map[string]*entry // by join key
	subs      map[*subscriber]struct{}
	closed    bool
	shutdown  chan struct{}
	subsDrops atomic.Uint64

	hist *historyWriter

	// asks keeps the pending asks and stores their outcomes: in this
	// process (localAsks) or in a store several replicas share
	// (sharedAsks). The Manager's methods call it without asking which.
	asks asks
}

// entry is the manager's record of one approval.
type entry struct {
	// decideMu serializes the outcome of one approval: Decide (which may call
	// the Persister outside m.mu), expiry and cancellation all hold it, so
	// exactly one of them resolves the approval. Lock order: decideMu, then m.mu.
	decideMu sync.Mutex
	a        Approval
	req      engine.Request
	key      string
	done     chan struct{} // closed on resolution
	timer    Timer
}

type subscriber struct {
	ch     chan Event
	filter Filter
}

// New returns a Manager. Call Shutdown when done.
func New(opts Options) *Manager {
	defaults.Positive(&opts.Timeout, DefaultTimeout)
	defaults.Positive(&opts.Retention, DefaultRetention)
	defaults.Positive(&opts.SubscriberBuffer, DefaultSubscriberBuffer)
	defaults.Positive(&opts.HistoryBuffer, DefaultHistoryBuffer)
	defaults.Positive(&opts.SweepInterval, DefaultSweepInterval)
	m := &Manager{
		opts:     opts,
		clock:    opts.Clock,
		log:      opts.Logger,
		byID:     make(map[string]*entry),
		pending:  make(map[string]*entry),
		subs:     make(map[*subscriber]struct{}),
		shutdown: make(chan struct{}),
	}
	if m.clock == nil {
		m.clock = RealClock{}
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	if opts.History != nil {
		m.hist = newHistoryWriter(opts.History, opts.HistoryBuffer, m.log)
	}
	if opts.Shared != nil {
		m.asks = startShared(m, opts.Shared)
	} else {
		m.asks = localAsks{m}
	}
	return m
}

// Timeout returns the configured ask timeout.
func (m *Manager) Timeout() time.Duration { return m.opts.Timeout }

// Done is closed when Shutdown starts.
func (m *Manager) Done() <-chan struct{} { return m.shutdown }

// Create opens an approval for an ask. An identical ask (same session,
// channel, workspace, tool and canonical tool_args) that is still pending is
// joined instead: Create returns it with joined true, and no new prompt is
// sent. An empty sessionID never joins, because unrelated callers cannot be
// told apart. decision must be the engine's ask for req.
func (m *Manager) Create(ctx context.Context, req engine.Request, decision engine.Decision, sessionID string) (Approval, bool, error) {
	return m.CreateAs(ctx, req, decision, sessionID, "")
}

// CreateAs is Create for an ask made by the agent runtime agent (rest,
// claude-code, ...), which the approval and any grant made from its answer
// record.
func (m *Manager) CreateAs(ctx context.Context, req engine.Request, decision engine.Decision, sessionID, agent string) (Approval, bool, error) {
	if err := ctx.Err(); err != nil {
		return Approval{}, false, err
	}
	args, canon, err := canonicalArgs(req.Call.Args())
	if err != nil {
		return Approval{}, false, err
	}
	if err := validateAsk(req, decision); err != nil {
		return Approval{}, false, err
	}
	req.Call = engine.NewCall(req.Call.Tool(), args)
	return m.asks.create(ctx, req, decision, sessionID, agent, joinKey(sessionID, req, canon))
}

func validateAsk(req engine.Request, decision engine.Decision) error {
	if strings.TrimSpace(req.Call.Tool()) == "" {
		return invalid("tool_name", "tool_name is empty")
	}
	if decision.Level != policy.Ask {
		return invalid("decision", fmt.Sprintf("decision is %q, not ask", decision.Level))
	}
	if req.Scope != nil && req.Scope.AvatarMode {
		// The engine turns ask into deny for owner-scope calls (nobody is
		// asked for a persona); reaching
		// here is a wiring bug, and prompting would be wrong.
		return invalid("scope", "owner-scope calls are never prompted")
	}
	return nil
}

func (m *Manager) newEntry(req engine.Request, d engine.Decision, sessionID, agent, key string) *entry {
	now := m.clock.Now()
	return &entry{
		req:  req,
		key:  key,
		done: make(chan struct{}),
		a: Approval{
			ID:        rand.Text(),
			Status:    StatusPending,
			CreatedAt: now,
			ExpiresAt: now.Add(m.opts.Timeout),
			Request: Request{
				ToolName:  req.Call.Tool(),
				ToolArgs:  req.Call.Args(),
				ChannelID: req.ChannelID,
				SessionID: sessionID,
				Workspace: req.Workspace,
				Agent:     agent,
				TokenID:   req.TokenID,
			},
			Asked: Asked{
				MatchedRule:   d.MatchedRule,
				Reason:        d.Reason,
				ExternalPaths: slices.Clone(d.ExternalPaths),
				Cause:         d.Cause,
			},
		},
	}
}

// canonicalArgs returns a private deep copy of args and their canonical JSON
// (encoding/json sorts map keys at every level).
func canonicalArgs(args map[string]any) (map[string]any, string, error) {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, "", invalid("tool_args", "tool_args do not encode as JSON: "+err.Error())
	}
	var cp map[string]any
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, "", invalid("tool_args", "tool_args do not decode from JSON: "+err.Error())
	}
	return cp, string(b), nil
}

func joinKey(sessionID string, req engine.Request, canon string) string {
	if sessionID == "" {
		return ""
	}
	return strings.Join([]string{sessionID, req.ChannelID, req.Workspace, req.Call.Tool(), canon}, "\x00")
}

// Get returns a snapshot of one approval.
func (m *Manager) Get(id string) (Approval, error) {
	e, err := m.lookup(id)
	if err != nil {
		return Approval{}, err
	}
	return m.snapshot(e), nil
}

// lookup finds an approval in memory or, when this process has not heard
// of it, where the asks are kept (a shared store: an ask another replica
// opened).
func (m *Manager) lookup(id string) (*entry, error) {
	m.mu.Lock()
	e, ok := m.byID[id]
	m.mu.Unlock()
	if ok {
		return e, nil
	}
	return m.asks.find(id)
}

// List returns the approvals in memory visible through filter, oldest first;
// an empty status lists every status.
func (m *Manager) List(filter Filter, status Status) []Approval {
	m.mu.Lock()
	out := make([]Approval, 0, len(m.pending))
	for _, e := range m.byID {
		if (status == "" || e.a.Status == status) && filter.Allows(e.a) {
			out = append(out, e.a)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b Approval) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// Wait blocks until the approval is resolved, timeout passes, or ctx ends,
// and returns its state then. At timeout it returns the pending approval and
// no error; when ctx ends it returns the state and ctx.Err(). A timeout of
// zero or less returns the current state at once.
func (m *Manager) Wait(ctx context.Context, id string, timeout time.Duration) (Approval, error) {
	e, err := m.lookup(id)
	if err != nil {
		return Approval{}, err
	}
	if timeout > 0 {
		expired := make(chan struct{})
		t := m.clock.AfterFunc(timeout, func() { close(expired) })
		defer t.Stop()
		select {
		case <-e.done:
		case <-expired:
		case <-ctx.Done():
			return m.snapshot(e), ctx.Err()
		}
	}
	return m.snapshot(e), nil
}

func (m *Manager) snapshot(e *entry) Approval {
	m.mu.Lock()
	defer m.mu.Unlock()
	return e.a
}

// Decide answers a pending approval on behalf of principal. The first answer
// wins; a later one gets the resolved approval and ErrAlreadyDecided.
// allow_always first calls the Persister; if that fails the approval stays
// pending and the error is returned.
func (m *Manager) Decide(ctx context.Context, id string, choice Choice, principal, comment string) (Approval, error) {
	return m.DecideFor(ctx, id, choice, 0, principal, comment)
}

// DecideFor is Decide with allow_for's ttl (0 for every other choice). A
// scoped choice (allow_session, allow_for) first makes its grant through
// the Granter; if that fails the approval stays pending and the error is
// returned, and a grant whose answer does not stand is taken back.
func (m *Manager) DecideFor(ctx context.Context, id string, choice Choice, ttl time.Duration, principal, comment string) (Approval, error) {
	if !choice.Valid() {
		return Approval{}, fmt.Errorf("%w: %q", ErrInvalidChoice, choice)
	}
	if strings.TrimSpace(principal) == "" {
		return Approval{}, invalid("principal", "the answer names no one")
	}
	if len(comment) > MaxCommentLen {
		return Approval{}, invalid("comment", fmt.Sprintf("comment is longer than %d bytes", MaxCommentLen))
	}
	e, err := m.lookup(id)
	if err != nil {
		return Approval{}, err
	}
	e.decideMu.Lock()
	defer e.decideMu.Unlock()
	cur := m.snapshot(e)
	if !cur.Pending() {
		return cur, ErrAlreadyDecided
	}
	if err := ctx.Err(); err != nil {
		return cur, err
	}
	if err := m.checkScope(cur, choice, ttl); err != nil {
		return cur, err
	}
	return m.asks.decide(ctx, e, cur, answer{choice: choice, ttl: ttl, by: principal, comment: comment})
}

// checkScope checks what a choice needs of the ask: a ttl for allow_for
// only, a session for allow_session, a Granter for both.
func (m *Manager) checkScope(a Approval, choice Choice, ttl time.Duration) error {
	switch {
	case choice == ChoiceAllowFor && (ttl < grant.MinTTL || ttl > grant.MaxTTL):
		return &FieldError{Err: ErrInvalidTTL, Field: "ttl_seconds",
			Message: fmt.Sprintf("allow_for needs ttl_seconds from %d to %d", int(grant.MinTTL.Seconds()), int(grant.MaxTTL.Seconds()))}
	case choice != ChoiceAllowFor && ttl != 0:
		return &FieldError{Err: ErrInvalidTTL, Field: "ttl_seconds", Message: "only allow_for takes ttl_seconds"}
	case choice == ChoiceAllowSession && a.Request.SessionID == "":
		return ErrNoSession
	case choice.Scoped() && m.opts.Granter == nil:
		return ErrNoGranter
	}
	return nil
}

func (m *Manager) persist(ctx context.Context, req engine.Request, by string) (*policy.Override, error) {
	if m.opts.Persister == nil {
		return nil, ErrNoPersister
	}
	rule, _, err := m.opts.Persister.AlwaysAllow(ctx, &req, by)
	if err != nil {
		return nil, fmt.Errorf("approval: persist always-allow: %w", err)
	}
	return &rule, nil
}

func statusOf(c Choice) Status {
	if c.Decision() == DecisionAllow {
		return StatusAllowed
	}
	return StatusDenied
}

// Cancel ends a pending approval as cancelled (final decision deny), for
// example when the agent that asked has gone away.
func (m *Manager) Cancel(id, principal, reason string) (Approval, error) {
	e, err := m.lookup(id)
	if err != nil {
		return Approval{}, err
	}
	if principal == "" {
		principal = PrincipalSystem
	}
	e.decideMu.Lock()
	defer e.decideMu.Unlock()
	return m.asks.cancel(e, principal, reason)
}

// resolveLocked moves a pending entry to its final state, wakes its waiters
// and tells subscribers. Callers hold e.decideMu and m.mu.
func (m *Manager) resolveLocked(e *entry, st Status, choice Choice, by, comment string) {
	out := Outcome{Status: st, Choice: choice, DecidedBy: by, Comment: comment, DecidedAt: m.clock.Now()}
	m.finishLocked(e, out.Apply(e.a, e.a.PersistedRule))
	m.record(e.a)
}

// finishLocked gives a pending entry its final state a, wakes its waiters
// and tells subscribers; it records nothing. Callers hold m.mu (and
// e.decideMu, except for a shared store's verdict: see doc.go).
func (m *Manager) finishLocked(e *entry, a Approval) {
	e.a = a
	if e.timer != nil {
		e.timer.Stop()
	}
	if e.key != "" && m.pending[e.key] == e {
		delete(m.pending, e.key)
	}
	close(e.done)
	m.publishLocked(EventResolved, e.a)
	e.a.Request.ToolArgs = clipArgs(e.a.Request.ToolArgs)
	e.req.Call = engine.NewCall(e.req.Call.Tool(), e.a.Request.ToolArgs)
	id := e.a.ID
	m.clock.AfterFunc(m.opts.Retention, func() { m.forget(id) })
}

func (m *Manager) forget(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byID[id]; ok && !e.a.Pending() {
		delete(m.byID, id)
	}
}

// Shutdown cancels every pending approval, waking its waiters with that
// answer, closes every subscription and flushes the history queue. Create
// fails with ErrClosed afterwards. It is idempotent. In shared mode only
// this process's waiters get the cancelled answer: the asks stay pending in
// the shared store for the other replicas.
func (m *Manager) Shutdown() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	close(m.shutdown)
	m.mu.Unlock()
	m.asks.close()
	m.mu.Lock()
	m.endSubscribersLocked()
	m.mu.Unlock()
	if m.hist != nil {
		m.hist.wait(5 * time.Second)
	}
}

// endSubscribersLocked closes every subscriber's channel and tells the
// history recorder to stop, at shutdown (local and shared alike). m.mu held.
func (m *Manager) endSubscribersLocked() {
	for s := range m.subs {
		delete(m.subs, s)
		close(s.ch)
	}
	if m.hist != nil {
		m.hist.stop()
	}
}

// RecoverHistory marks as cancelled every approval the History still holds
// as pending: asks left by a previous run that stopped or crashed before
// they were answered. Their agents are gone; nobody can answer them now. It
// returns how many it closed. In shared mode it closes none: a pending ask
// may belong to another replica that is alive, and expiry closes those
// whose replica is gone.
func (m *Manager) RecoverHistory(ctx context.Context) (int, error) {
	return m.asks.recoverHistory(ctx)
}

// Stats returns the manager's counters.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	s := Stats{Pending: m.pendingCountLocked(), Subscribers: len(m.subs)}
	m.mu.Unlock()
	s.SubscribersDropped = m.subsDrops.Load()
	if m.hist != nil {
		s.HistoryDropped = m.hist.dropped.Load()
		s.HistoryErrors = m.hist.errors.Load()
	}
	return s
}

func (m *Manager) pendingCountLocked() int {
	n := 0
	for _, e := range m.byID {
		if e.a.Pending() {
			n++
		}
	}
	return n
}

func (m *Manager) record(a Approval) {
	if m.hist != nil {
		m.hist.enqueue(a)
	}
}
