package web

import (
	"context"
	"slices"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
)

// grantsFor lists the live grants p may see: all of them, or for a person
// limited to some channels or sessions, those made there.
func (u *UI) grantsFor(p auth.Principal) []grant.Grant {
	if u.deps.Grants == nil {
		return nil
	}
	f := p.ApprovalFilter()
	var out []grant.Grant
	for _, g := range u.deps.Grants.List() {
		if grantVisible(f, g) {
			out = append(out, g)
		}
	}
	return out
}

// grantVisible reports whether a grant was made on the filter's channels
// and sessions. A timed grant holds in every session, so a person limited
// to sessions sees only the session grants of theirs.
func grantVisible(f approval.Filter, g grant.Grant) bool {
	if len(f.Channels) > 0 && !slices.ContainsFunc(f.Channels, func(c string) bool { return engine.ChannelKey(c) == g.ChannelID }) {
		return false
	}
	if len(f.Sessions) > 0 && (g.Scope != grant.ScopeSession || !slices.Contains(f.Sessions, g.SessionID)) {
		return false
	}
	return true
}

// revokeGrant revokes a grant p may see; one p may not see is not found.
func (u *UI) revokeGrant(ctx context.Context, p auth.Principal, id string) (grant.Grant, error) {
	if err := service.Require(p, service.RightApprove); err != nil {
		return grant.Grant{}, err
	}
	if !slices.ContainsFunc(u.grantsFor(p), func(g grant.Grant) bool { return g.ID == id }) {
		return grant.Grant{}, grant.ErrNotFound
	}
	return u.deps.Grants.Revoke(ctx, id)
}

// decide answers an ask as p with a choice; ttl is allow_for's
// ttl_seconds.
func (u *UI) decide(ctx context.Context, p auth.Principal, id string, choice approval.Choice, ttl int) (approval.Approval, error) {
	_ = ttl // TODO(grantpages): pass to the service once it takes it
	return u.approvals.Decide(ctx, p, id, choice, "")
}
