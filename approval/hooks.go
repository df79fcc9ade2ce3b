package approval

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/policy"
)

// Persister writes an "always allow" answer into the policy (docs/decisions.md,
// "Always allow"). service.Policy implements it. by names the person who
// answered, so the override says who approved it. It returns the approval
// override it appended, and whether it was added (false when one was
// already there). ctx may carry the shared store's transaction (see
// Shared.Resolve), which the write then joins.
type Persister interface {
	AlwaysAllow(ctx context.Context, req *engine.Request, by string) (policy.Override, bool, error)
}

// Granter makes the grant of a scoped answer (allow_session, allow_for)
// to the ask a, for ttl (allow_for), given by a person (docs/grants.md),
// and takes it back when the answer does not stand. service implements it
// over grant.Book.
type Granter interface {
	Grant(ctx context.Context, a Approval, choice Choice, ttl time.Duration, by string) (grant.Grant, error)
	RevokeGrant(ctx context.Context, id string) error
}

// History records approvals durably. The manager calls RecordApproval off the
// hot path, from one writer goroutine, on creation and on every state change,
// with a snapshot of the approval after the change.
type History interface {
	RecordApproval(ctx context.Context, a Approval) error
	// PendingApprovals returns the approvals recorded as pending, which after
	// a restart are asks left behind by a previous run.
	PendingApprovals(ctx context.Context) ([]Approval, error)
}
