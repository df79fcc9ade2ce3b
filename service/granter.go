package service

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/redact"
)

// Granter makes the grant of a scoped answer (docs/grants.md): it is
// approval.Granter over this replica's Book, with the policy in force to
// tell the workspace as the engine judges it.
type Granter struct {
	book   *grant.Book
	policy PolicyReader
	now    func() time.Time
}

var _ approval.Granter = (*Granter)(nil)

// NewGranter returns the Granter over book; policy is the policy in force.
func NewGranter(book *grant.Book, policy PolicyReader) *Granter {
	return &Granter{book: book, policy: policy, now: time.Now}
}

// Grant makes and stores the grant that choice gives for the ask a: bound
// to its tool, to what "always allow" would remember of it (or, with
// nothing to remember, to its arguments' digest), to its channel and
// workspace, to its session for allow_session, for ttl (allow_for) or
// grant.SessionLifetime (allow_session).
func (g *Granter) Grant(ctx context.Context, a approval.Approval, choice approval.Choice, ttl time.Duration, by string) (grant.Grant, error) {
	req := engine.Request{Call: a.Request.Call(),
		ChannelID: a.Request.ChannelID, Workspace: a.Request.Workspace}
	out := grant.Grant{
		ToolName: req.Call.Tool(), SessionID: a.Request.SessionID, TokenID: a.Request.TokenID, ChannelID: engine.ChannelKey(req.ChannelID),
		Workspace: g.policy.Engine().GrantWorkspace(&req), Agent: a.Request.Agent,
		Summary: redact.Summarize(req.Call), ApprovalID: a.ID, GrantedBy: by,
		CreatedAt: g.now().UTC().Truncate(time.Millisecond),
	}
	out.MatchType, out.Pattern = engine.Remembered(&req)
	if out.Pattern == "" {
		d, err := engine.ArgsDigest(req.Call.Args())
		if err != nil {
			return grant.Grant{}, &grant.InvalidError{Message: "the arguments cannot be written as JSON: " + err.Error(), Cause: err}
		}
		out.MatchType, out.ArgsDigest = "", d
	}
	switch choice {
	case approval.ChoiceAllowSession:
		out.Scope, out.ExpiresAt = grant.ScopeSession, out.CreatedAt.Add(grant.SessionLifetime)
	case approval.ChoiceAllowFor:
		out.Scope, out.ExpiresAt = grant.ScopeTimed, out.CreatedAt.Add(ttl)
		out.SessionID, out.TokenID = "", "" // any session
	default:
		return grant.Grant{}, fmt.Errorf("%w: %s makes no grant", approval.ErrInvalidChoice, choice)
	}
	return g.book.Add(ctx, out)
}

// RevokeGrant takes a grant back.
func (g *Granter) RevokeGrant(ctx context.Context, id string) error {
	_, err := g.book.Revoke(ctx, id)
	return err
}
