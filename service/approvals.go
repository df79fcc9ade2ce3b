package service

import (
	"context"
	"errors"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/auth"
)

// Approvals is the approvals' use cases over the pending-ask manager.
type Approvals struct {
	m      ApprovalManager
	ledger *pendingLedger
}

// NewApprovals builds the approvals service; m nil means this server takes
// no approvals (Available reports false).
func NewApprovals(m ApprovalManager) *Approvals {
	return &Approvals{m: m, ledger: newPendingLedger(PendingCaps{})}
}

// SetPendingCaps sets the caps on pending asks per token and session.
func (s *Approvals) SetPendingCaps(c PendingCaps) { s.ledger = newPendingLedger(c) }

// Available reports whether asks can be made.
func (s *Approvals) Available() bool { return s != nil && s.m != nil }

// Manager returns the manager (nil when none).
func (s *Approvals) Manager() ApprovalManager { return s.m }

// Asked is the outcome of Ask.
type Asked struct {
	Approval approval.Approval
	// Refused is set when the ask could not be stored (the shared database
	// cannot be reached): the call is denied, Reason says why.
	Refused bool
	Reason  string
	// Gone is set when the caller went away while waiting; the approval
	// stays for others to see.
	Gone bool
}

// Ask opens (or joins) an approval for an ask and waits up to wait for a
// person's answer. An ask that cannot be stored because the storage is
// unavailable is not an error: the call is denied with
// MsgApprovalsUnavailable (openapi.yaml, fail closed).
//
// token is the asking token's id: the asks it and its session hold are
// capped, and an ask over a cap is refused with a 429 before it is opened.
func (s *Approvals) Ask(ctx context.Context, token string, req *engine.Request, d engine.Decision, session, agent string, wait time.Duration) (Asked, error) {
	if err := s.ledger.reserve(token, session, s.stillPending); err != nil {
		return Asked{}, err
	}
	a, _, err := s.m.CreateAs(ctx, *req, d, session, agent)
	id := ""
	if err == nil && a.Pending() {
		id = a.ID
	}
	s.ledger.settle(token, session, id)
	if errors.Is(err, store.ErrUnavailable) {
		return Asked{Refused: true, Reason: MsgApprovalsUnavailable}, nil
	}
	if err != nil {
		return Asked{}, err
	}
	if wait <= 0 {
		return Asked{Approval: a}, nil
	}
	a, err = s.m.Wait(ctx, a.ID, wait)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Asked{Approval: a, Gone: true}, nil
	}
	return Asked{Approval: a}, err
}

// List lists the approvals p may see, with a status ("" for all).
func (s *Approvals) List(p auth.Principal, status approval.Status) ([]approval.Approval, error) {
	if status != "" && !status.Valid() {
		return nil, BadRequest("status", "status must be pending, allowed, denied, expired or cancelled")
	}
	list := s.m.List(p.ApprovalFilter(), status)
	if list == nil {
		list = []approval.Approval{}
	}
	return list, nil
}

// Get returns an approval p may see, waiting up to wait while it is
// pending. One outside p's channels or sessions is not found. A wait the
// caller abandons returns ctx's error.
func (s *Approvals) Get(ctx context.Context, p auth.Principal, id string, wait time.Duration) (approval.Approval, error) {
	a, err := s.m.Get(id)
	if err != nil {
		return a, err
	}
	if p.Role == auth.RoleApprover && !p.ApprovalFilter().Allows(a) {
		return approval.Approval{}, approval.ErrNotFound
	}
	if wait > 0 && a.Pending() {
		return s.m.Wait(ctx, id, wait)
	}
	return a, nil
}

// Decide answers an approval as p. The first answer wins; a later one is
// approval.ErrAlreadyDecided. An approval outside p's channels or sessions
// is not found.
func (s *Approvals) Decide(ctx context.Context, p auth.Principal, id string, choice approval.Choice, comment string) (approval.Approval, error) {
	return s.DecideFor(ctx, p, id, choice, 0, comment)
}

// TTLSeconds is an answer's ttl_seconds as every door reads it: absent
// (nil) is 0, which every choice but allow_for takes; a given value must
// be a positive whole number of seconds, whose range and choice DecideFor
// checks.
func TTLSeconds(n *int) (time.Duration, error) {
	if n == nil {
		return 0, nil
	}
	if *n <= 0 {
		return 0, BadRequest("ttl_seconds", "ttl_seconds must be a whole number of seconds from %d to %d", int(grant.MinTTL.Seconds()), int(grant.MaxTTL.Seconds()))
	}
	return time.Duration(*n) * time.Second, nil
}

// DecideFor is Decide with allow_for's ttl (docs/grants.md); 0 for every
// other choice.
func (s *Approvals) DecideFor(ctx context.Context, p auth.Principal, id string, choice approval.Choice, ttl time.Duration, comment string) (approval.Approval, error) {
	if err := Require(p, RightApprove); err != nil {
		return approval.Approval{}, err
	}
	if !choice.Valid() {
		return approval.Approval{}, approval.ErrInvalidChoice
	}
	if len(comment) > approval.MaxCommentLen {
		return approval.Approval{}, BadRequest("comment", "comment is longer than %d bytes", approval.MaxCommentLen)
	}
	if choice == approval.ChoiceAllowAlways && !p.ApprovalFilter().MayAllowAlways() {
		return approval.Approval{}, Forbidden("choice", approval.MsgScopedAlways)
	}
	if choice == approval.ChoiceAllowFor && !p.ApprovalFilter().MayAllowFor() {
		return approval.Approval{}, Forbidden("choice", approval.MsgScopedFor)
	}
	// The channel and session check needs the approval: when it cannot be
	// looked up, nothing is answered (fail closed), whatever the reason.
	a, err := s.m.Get(id)
	if err != nil {
		return approval.Approval{}, err
	}
	if !p.ApprovalFilter().Allows(a) {
		return approval.Approval{}, approval.ErrNotFound
	}
	return s.m.DecideFor(ctx, id, choice, ttl, p.Name, comment)
}

// stillPending reports whether an ask still waits for an answer.
func (s *Approvals) stillPending(id string) bool {
	a, err := s.m.Get(id)
	return err == nil && a.Pending()
}
