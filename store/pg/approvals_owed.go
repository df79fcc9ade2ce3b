package pg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/store"
)

// An always-allow answer whose rule the Persister wrote must end its ask
// allowed: the rule allows every identical call from then on, so a later
// deny of the same ask would tell the approver their deny stood while it
// does not. When the answer's own transaction fails after the rule was
// written, the outcome is "owed": stored again at once (settleLost), and,
// if the database still cannot take it, kept in memory and stored before
// any later answer to that ask through this replica and before each expiry
// round this replica runs.
//
// Limits: the owed outcome lives in this process only. Another replica can
// still answer the ask while this one cannot reach the database, and an
// owed outcome is lost if this process ends before storing it; the rule
// stays in force either way (the policy has no "take back" step here).

// settleAttempts and settleBackoff bound the retries of settleLost.
const (
	settleAttempts = 3
	settleBackoff  = 100 * time.Millisecond
)

// settleLost stores next, the outcome of an always-allow whose rule was
// written and whose transaction failed with txErr, in fresh transactions.
func (s *Approvals) settleLost(ctx context.Context, next approval.Approval, txErr error) (approval.Approval, error) {
	ctx = context.WithoutCancel(ctx) // the rule is written whether the caller waits or not
	var err error
	for i := range settleAttempts {
		if i > 0 {
			time.Sleep(time.Duration(i) * settleBackoff)
		}
		var got approval.Approval
		if got, err = s.settle(ctx, next); err == nil || errors.Is(err, approval.ErrNotFound) {
			return s.settled(next, got, err)
		}
	}
	s.owe(next)
	s.log.Error("approval: an always-allow rule was written but its answer could not be stored; kept to store before any later answer",
		"id", next.ID, "err", err, "first_err", txErr)
	return next, fmt.Errorf("pg: resolve ask %s: the rule was written, the answer is not stored yet: %w: %w", next.ID, store.ErrUnavailable, err)
}

// settle stores next in one transaction if its ask is still pending and
// returns what the ask holds afterwards.
func (s *Approvals) settle(ctx context.Context, next approval.Approval) (approval.Approval, error) {
	var got approval.Approval
	err := s.inTx(ctx, s.db.opTimeout, func(octx context.Context, tx pgx.Tx) error {
		cur, err := scanAsk(tx.QueryRow(octx, `SELECT `+approvalCols+` FROM approval_asks WHERE id = $1 FOR UPDATE`, next.ID))
		if errors.Is(err, pgx.ErrNoRows) {
			return approval.ErrNotFound
		}
		if err != nil {
			return err
		}
		if got = cur; !cur.Pending() {
			return nil // decided meanwhile, perhaps by the first transaction's commit after all
		}
		// No deadline check: the answer came in time (Resolve checked) and
		// its rule is in force.
		got = next
		if err := storeOutcome(octx, tx, next); err != nil {
			return err
		}
		if err := recordApprovalTx(octx, tx, next); err != nil {
			return err
		}
		return notify(octx, tx, next.ID)
	})
	if errors.Is(err, approval.ErrNotFound) {
		return approval.Approval{}, err
	}
	return got, s.db.Wrap(ctx, err, "store always-allow answer of "+next.ID)
}

// settled ends the owed state of next after settle stored got (err nil) or
// found no ask (ErrNotFound), and says how the answer went.
func (s *Approvals) settled(next, got approval.Approval, err error) (approval.Approval, error) {
	s.owedMu.Lock()
	delete(s.owed, next.ID)
	s.owedMu.Unlock()
	switch {
	case err != nil:
		s.log.Error("approval: an always-allow rule was written for an ask the store no longer holds", "id", next.ID)
		return approval.Approval{}, err
	case sameOutcome(got, next):
		return got, nil
	}
	s.log.Error("approval: an always-allow rule was written but the ask ended otherwise",
		"id", next.ID, "status", got.Status, "decided_by", got.DecidedBy)
	return got, approval.ErrAlreadyDecided
}

// sameOutcome reports whether the stored a holds the outcome of want.
func sameOutcome(a, want approval.Approval) bool {
	return a.Status == want.Status && a.Choice == want.Choice && a.DecidedBy == want.DecidedBy &&
		a.DecidedAt != nil && want.DecidedAt != nil && a.DecidedAt.Equal(*want.DecidedAt)
}

func (s *Approvals) owe(next approval.Approval) {
	s.owedMu.Lock()
	defer s.owedMu.Unlock()
	s.owed[next.ID] = next
}

// owedOf returns the owed outcome of ask id, if any.
func (s *Approvals) owedOf(id string) (approval.Approval, bool) {
	s.owedMu.Lock()
	defer s.owedMu.Unlock()
	a, ok := s.owed[id]
	return a, ok
}

// payOwed stores the owed outcome before a later answer to its ask: that
// answer then lost (ErrAlreadyDecided with the stored state). While the
// store cannot take it, the later answer fails with store.ErrUnavailable
// instead of being stored.
func (s *Approvals) payOwed(ctx context.Context, owed approval.Approval) (approval.Approval, error) {
	got, err := s.settle(context.WithoutCancel(ctx), owed)
	if err != nil && !errors.Is(err, approval.ErrNotFound) {
		return approval.Approval{}, fmt.Errorf("pg: resolve ask %s: an earlier always-allow answer is not stored yet: %w: %w", owed.ID, store.ErrUnavailable, err)
	}
	if got, err = s.settled(owed, got, err); err != nil {
		return got, err
	}
	return got, approval.ErrAlreadyDecided
}

// payAllOwed tries once to store every owed outcome and returns the ids of
// those still owed.
func (s *Approvals) payAllOwed(ctx context.Context) []string {
	s.owedMu.Lock()
	list := make([]approval.Approval, 0, len(s.owed))
	for _, a := range s.owed {
		list = append(list, a)
	}
	s.owedMu.Unlock()
	still := []string{}
	for _, a := range list {
		got, err := s.settle(ctx, a)
		if err != nil && !errors.Is(err, approval.ErrNotFound) {
			still = append(still, a.ID)
			continue
		}
		_, _ = s.settled(a, got, err) // logged there when it did not end allowed
	}
	return still
}
