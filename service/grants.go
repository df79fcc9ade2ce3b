package service

import (
	"context"
	"slices"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/store/auth"
)

// GrantFilter narrows a list of grants; empty fields match all.
type GrantFilter struct {
	Agent   string
	Session string
	Tool    string
}

// Grants is the grants' use cases (docs/grants.md): list and revoke, as a
// principal may.
type Grants struct {
	book *grant.Book
}

// NewGrants returns the grants service; book nil means this server keeps
// no grants (Available reports false).
func NewGrants(book *grant.Book) *Grants { return &Grants{book: book} }

// Available reports whether the server keeps grants.
func (s *Grants) Available() bool { return s != nil && s.book != nil }

// List lists the live grants p may see that pass f, oldest first. A person
// limited to some channels sees the grants made there; one limited to
// sessions, the session grants of those sessions (a timed grant holds in
// every session, so it is not theirs alone to see).
func (s *Grants) List(p auth.Principal, f GrantFilter) ([]grant.Grant, error) {
	if err := Require(p, RightApprove); err != nil {
		return nil, err
	}
	out := []grant.Grant{}
	if !s.Available() {
		return out, nil
	}
	vis := p.ApprovalFilter()
	for _, g := range s.book.List() {
		if GrantVisible(vis, g) && f.Matches(g) {
			out = append(out, g)
		}
	}
	return out, nil
}

// Revoke takes back a grant p may see, on every replica; one p may not see
// is grant.ErrNotFound. An admin may take back any stored grant, one made
// through another replica a moment ago included.
func (s *Grants) Revoke(ctx context.Context, p auth.Principal, id string) (grant.Grant, error) {
	if err := Require(p, RightApprove); err != nil {
		return grant.Grant{}, err
	}
	if !s.Available() {
		return grant.Grant{}, grant.ErrNotFound
	}
	live := s.book.List()
	i := slices.IndexFunc(live, func(g grant.Grant) bool { return g.ID == id })
	if p.Role != auth.RoleAdmin && (i < 0 || !GrantVisible(p.ApprovalFilter(), live[i])) {
		return grant.Grant{}, grant.ErrNotFound
	}
	return s.book.Revoke(ctx, id)
}

// GrantVisible reports whether a grant was made on the filter's channels
// and, for a filter with sessions, is a session grant of one of them.
func GrantVisible(f approval.Filter, g grant.Grant) bool {
	if len(f.Channels) > 0 && !slices.ContainsFunc(f.Channels, func(c string) bool { return engine.ChannelKey(c) == g.ChannelID }) {
		return false
	}
	if len(f.Sessions) > 0 && (g.Scope != grant.ScopeSession || !slices.Contains(f.Sessions, g.SessionID)) {
		return false
	}
	return true
}

// Matches reports whether g passes f. A session filter finds session
// grants only: a timed grant names no session (it holds in every one).
func (f GrantFilter) Matches(g grant.Grant) bool {
	switch {
	case f.Agent != "" && g.Agent != f.Agent:
		return false
	case f.Tool != "" && g.ToolName != f.Tool:
		return false
	case f.Session != "" && (g.Scope != grant.ScopeSession || g.SessionID != f.Session):
		return false
	}
	return true
}
