package approval

import (
	"context"

	"github.com/toolgate/toolgate/engine"
)

// Persister writes an "always allow" answer into the policy (docs/decisions.md,
// "Always allow"). store.Store satisfies it. by names the person who
// answered, so the override says who approved it. It returns the approval
// override it appended, and whether it was added (false when one was
// already there).
type Persister interface {
	AlwaysAllowBy(req *engine.Request, by string) (map[string]any, bool, error)
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
