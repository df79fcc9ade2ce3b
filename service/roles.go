package service

import (
	"errors"

	"github.com/toolgate/toolgate/store/auth"
)

// Right is something a principal may be allowed to do. Every role check of
// REST, JSON-RPC, the websocket and the pages asks Allowed or Require, so
// that one table says which role may do what.
type Right string

// The rights.
const (
	// RightEvaluate: decide calls (evaluate, check, the hooks).
	RightEvaluate Right = "evaluate"
	// RightRead: read the policy, approvals and decisions; sign in to the
	// admin pages.
	RightRead Right = "read"
	// RightApprove: answer approvals (REST, the inbox page, the websocket).
	RightApprove Right = "approve"
	// RightWrite: change the policy, preview drafts, try calls in the
	// playground, manage tokens (list, create, revoke).
	RightWrite Right = "write"
)

// roleRights lists the rights of each role. The roles are not ordered (an
// approver may not evaluate), so the rights are listed per role.
var roleRights = map[string][]Right{
	auth.RoleAdmin:    {RightEvaluate, RightRead, RightApprove, RightWrite},
	auth.RoleApprover: {RightRead, RightApprove},
	auth.RoleAgent:    {RightEvaluate},
}

// ErrForbidden is wrapped by Require's error.
var ErrForbidden = errors.New("service: forbidden")

// Allowed reports whether role has the right.
func Allowed(role string, r Right) bool {
	for _, have := range roleRights[role] {
		if have == r {
			return true
		}
	}
	return false
}

// Require returns nil when p has the right, else a KindForbidden Error
// whose message names the role and the right and whose cause is
// ErrForbidden.
func Require(p auth.Principal, r Right) error {
	if Allowed(p.Role, r) {
		return nil
	}
	role := p.Role
	if role == "" {
		role = "(none)"
	}
	return withCause(Forbidden("", "role %s may not %s", role, r), ErrForbidden)
}
