package web

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
)

// grants is the grants service over this replica's Book.
func (u *UI) grants() *service.Grants { return service.NewGrants(u.deps.Grants) }

// grantsFor lists the live grants p may see (service.Grants.List).
func (u *UI) grantsFor(p auth.Principal) []grant.Grant {
	list, _ := u.grants().List(p, service.GrantFilter{})
	return list
}

// revokeGrant revokes a grant p may see; one p may not see is not found.
func (u *UI) revokeGrant(ctx context.Context, p auth.Principal, id string) (grant.Grant, error) {
	return u.grants().Revoke(ctx, p, id)
}

// decide answers an ask as p with a choice; ttl is allow_for's
// ttl_seconds.
func (u *UI) decide(ctx context.Context, p auth.Principal, id string, choice approval.Choice, ttl int) (approval.Approval, error) {
	return u.approvals.DecideFor(ctx, p, id, choice, time.Duration(ttl)*time.Second, "")
}
