package approval

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/policy"
)

// Defaults of the shared-mode Options.
const (
	DefaultSweepInterval = time.Second
	// sharedCallTimeout bounds a shared-store call made for a method that
	// takes no context (Get, Wait's lookup, the sweep, a resync).
	sharedCallTimeout = 5 * time.Second
)

// Shared is where pending asks live when several replicas of toolgate act as
// one service (openapi.yaml, "Shared state for several replicas"): a table
// every replica reads and writes, and a notification channel that tells
// every replica of each change. store/asks implements it on PostgreSQL.
//
// The store is the only judge of an ask's outcome: Resolve and ExpireDue
// change an ask only while it is pending, in one atomic step, so the first
// answer wins whichever replica it comes through. Every error that means the
// store cannot be reached wraps store.ErrUnavailable; the Manager passes it
// on with %w.
type Shared interface {
	// Insert stores a, a new pending ask. When key is not empty and an ask
	// with the same key is pending already (on any replica), Insert joins it
	// instead: it adds one to that ask's Joins and returns it with joined
	// true. key may hold any bytes.
	Insert(ctx context.Context, a Approval, key string) (stored Approval, joined bool, err error)
	// Resolve gives the pending ask id its outcome. When the ask is no longer
	// pending it returns the stored state and ErrAlreadyDecided; ErrNotFound
	// when no ask has this id. prepare, when not nil, runs while the store
	// holds the ask, so that no other Resolve or expiry can finish in the
	// meantime, and only when it is still pending; the rule it returns is
	// stored as PersistedRule, and its error is returned with nothing changed.
	// The context prepare gets carries the store's transaction as a
	// txn.Enclosing, so that a policy write prepare makes on the same
	// database commits with the outcome or not at all.
	// An outcome whose DecidedAt is at or after the ask's ExpiresAt does not
	// count (unless it is itself an expiry): the ask is stored as expired
	// instead, and Resolve returns that with ErrAlreadyDecided.
	Resolve(ctx context.Context, id string, out Outcome, prepare func(ctx context.Context, cur Approval) (*policy.Override, error)) (Approval, error)
	// Get returns the stored state of one ask, or ErrNotFound.
	Get(ctx context.Context, id string) (Approval, error)
	// Pending returns every pending ask, oldest first.
	Pending(ctx context.Context) ([]Approval, error)
	// ExpireDue expires (as deny, by PrincipalSystem) every pending ask whose
	// ExpiresAt is at or before now, if this replica holds the expiry lease
	// at the moment, and returns the asks it expired; none when another
	// replica holds the lease. Resolved asks older than keep are removed.
	ExpireDue(ctx context.Context, now time.Time, keep time.Duration) ([]Approval, error)
	// Listen reports every ask created or resolved through any replica (this
	// one included) to n, until ctx ends; it reconnects by itself, with
	// backoff, when the notification channel breaks, and calls n.Resync after
	// every (re)connect, the first one included, since notifications sent
	// while it was away are lost. It returns ctx's error.
	Listen(ctx context.Context, n Notify) error
}

// Outcome is how a pending ask ends, as Resolve stores it.
type Outcome struct {
	Status    Status
	Choice    Choice
	DecidedBy string
	Comment   string
	DecidedAt time.Time
}

// Decision returns the final decision an outcome gives: allow only for
// StatusAllowed.
func (o Outcome) Decision() string {
	if o.Status == StatusAllowed {
		return DecisionAllow
	}
	return DecisionDeny
}

// Apply returns a with the outcome and the persisted rule set.
func (o Outcome) Apply(a Approval, rule *policy.Override) Approval {
	at := o.DecidedAt
	a.Status, a.Choice, a.DecidedBy, a.Comment = o.Status, o.Choice, o.DecidedBy, o.Comment
	a.DecidedAt, a.Decision, a.PersistedRule = &at, o.Decision(), rule
	return a
}

// Notify is what Listen calls. Both funcs are called from Listen's goroutine,
// one call at a time.
type Notify struct {
	// Changed gets the stored state of an ask just created, joined or
	// resolved.
	Changed func(Approval)
	// Resync is called after the notification channel (re)connected: the
	// receiver reloads what it holds from the store.
	Resync func()
}
