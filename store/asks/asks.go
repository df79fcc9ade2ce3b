package asks

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store/history"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/txn"
)

// expiryLockKey is the pg_try_advisory_xact_lock key of the expiry lease
// ("toolasks" in ASCII): the replica that holds it runs expiry, the others
// skip that round.
const expiryLockKey int64 = 0x746f6f6c61736b73

// approvalCols is the column list every query that returns an ask selects,
// in the order scanAsk reads.
const approvalCols = `id, status, created_at, expires_at, request, joins, choice, decided_by, comment, decided_at, persisted_rule`

// Approvals keeps the pending asks of every replica in PostgreSQL; it
// implements approval.Shared. Every ask it opens and every outcome it
// stores is recorded in the approval history (History's tables) in the same
// transaction, so the history holds what the asks table decided even when
// a replica dies right after: a Manager on it needs no History of its own
// (one would only repeat those writes, as no-ops). It is safe for
// concurrent use.
type Approvals struct {
	db  *pg.DB
	log *slog.Logger
	// preparing lets one Resolve with a prepare func at a time hold its row
	// lock and connection while prepare runs: an always-allow waits for
	// the service's policy lock, which an edit holds while it waits for a
	// connection, and a prepare whose store is on another database (or
	// whose write does not join) takes a second connection. Several such
	// answers at once could otherwise take every connection and wait on
	// each other until they time out.
	preparing chan struct{}
}

var _ approval.Shared = (*Approvals)(nil)

// OpenApprovals migrates the approvals part of db (and the approval
// history's, which every change is recorded in, in the same transaction)
// and returns the shared ask store on it.
func OpenApprovals(ctx context.Context, db *pg.DB) (*Approvals, error) {
	if err := pg.MigrateParts(ctx, db, pg.PartApprovals, pg.PartHistory); err != nil {
		return nil, err
	}
	return &Approvals{db: db, log: db.Log(), preparing: make(chan struct{}, 1)}, nil
}

// asked is what the request column holds: what was asked and why.
type asked struct {
	Request approval.Request `json:"request"`
	Asked   approval.Asked   `json:"asked"`
}

// Insert stores a new pending ask, or joins the pending ask with the same
// key (one conditional INSERT on the partial unique index of pending keys),
// and notifies every replica.
func (s *Approvals) Insert(ctx context.Context, a approval.Approval, key string) (approval.Approval, bool, error) {
	body, err := json.Marshal(asked{Request: a.Request, Asked: a.Asked})
	if err != nil {
		return approval.Approval{}, false, fmt.Errorf("pg: insert ask: %w", approval.InvalidRequest("tool_args", "the ask does not encode as JSON: "+err.Error()))
	}
	var hashed []byte // NULL: never joins
	if key != "" {
		sum := sha256.Sum256([]byte(key))
		hashed = sum[:]
	}
	var got approval.Approval
	err = s.inTx(ctx, s.db.OpTimeout(), func(octx context.Context, tx pgx.Tx) error {
		row := tx.QueryRow(octx, `INSERT INTO approval_asks (id, status, join_key, created_at, expires_at, request)
			VALUES ($1, 'pending', $2, $3, $4, $5)
			ON CONFLICT (join_key) WHERE status = 'pending' DO UPDATE SET joins = approval_asks.joins + 1
			RETURNING `+approvalCols, a.ID, hashed, a.CreatedAt, a.ExpiresAt, string(body))
		var err error
		if got, err = scanAsk(row); err != nil {
			return err
		}
		if got.ID == a.ID {
			if err := history.RecordApprovalTx(octx, tx, got); err != nil {
				return err
			}
		}
		return notify(octx, tx, got.ID)
	})
	if err != nil {
		return approval.Approval{}, false, s.db.Wrap(ctx, err, "insert ask")
	}
	return got, got.ID != a.ID, nil
}

// Resolve ends a pending ask, first answer wins: the row is locked (SELECT
// ... FOR UPDATE), checked to be pending, prepare runs, and one UPDATE
// stores the outcome, in one transaction that also notifies. An answer that
// comes at or after the ask's deadline does not count: the ask is stored as
// expired instead, and Resolve returns that with ErrAlreadyDecided.
//
// prepare gets a context carrying this transaction as a txn.Enclosing: a
// policy write it makes on this database (an "always allow" rule) joins the
// transaction, so the rule and the outcome commit together or not at all,
// and the rule goes in force on this replica only after the commit
// (docs/operations.md#an-always-allow-answer-and-its-rule-commit-together).
func (s *Approvals) Resolve(ctx context.Context, id string, out approval.Outcome, prepare func(context.Context, approval.Approval) (*policy.Override, error)) (approval.Approval, error) {
	if pg.Text(id) != id {
		return approval.Approval{}, approval.ErrNotFound // no id has a NUL or bad UTF-8
	}
	// What PostgreSQL text cannot hold is replaced here, so the winner is
	// told what every replica will read.
	out.Comment, out.DecidedBy = pg.Text(out.Comment), pg.Text(out.DecidedBy)
	if prepare != nil {
		select {
		case s.preparing <- struct{}{}:
			defer func() { <-s.preparing }()
		case <-ctx.Done():
			return approval.Approval{}, ctx.Err()
		}
	}
	var next approval.Approval
	var verdict, prepErr error
	var enc *txn.Enclosing
	limit := s.db.OpTimeout()
	if prepare != nil {
		limit *= 3 // the policy may be written and checked in this transaction
	}
	err := s.inTx(ctx, limit, func(octx context.Context, tx pgx.Tx) error {
		cur, err := scanAsk(tx.QueryRow(octx, `SELECT `+approvalCols+` FROM approval_asks WHERE id = $1 FOR UPDATE`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			verdict = approval.ErrNotFound
			return nil
		}
		if err != nil {
			return err
		}
		if !cur.Pending() {
			next, verdict = cur, approval.ErrAlreadyDecided
			return nil
		}
		if out.Status != approval.StatusExpired && !cur.ExpiresAt.After(out.DecidedAt) {
			out = approval.Outcome{Status: approval.StatusExpired, DecidedBy: approval.PrincipalSystem,
				Comment: "no answer before the timeout", DecidedAt: out.DecidedAt}
			prepare, verdict = nil, approval.ErrAlreadyDecided
		}
		var rule *policy.Override
		if prepare != nil {
			enc = s.db.Enclose(tx)
			if rule, prepErr = prepare(txn.With(octx, enc), cur); prepErr != nil {
				return prepErr
			}
		}
		next = out.Apply(cur, rule)
		if err := storeOutcome(octx, tx, next); err != nil {
			return err
		}
		if err := history.RecordApprovalTx(octx, tx, next); err != nil {
			return err
		}
		return notify(octx, tx, id)
	})
	switch {
	case prepErr != nil:
		return next, prepErr
	case err != nil:
		return next, s.db.Wrap(ctx, err, "resolve ask "+id)
	}
	if enc != nil {
		enc.Committed()
	}
	return next, verdict
}

// storeOutcome writes the final state of an ask.
func storeOutcome(ctx context.Context, tx pgx.Tx, a approval.Approval) error {
	var rule any // NULL without a rule
	if a.PersistedRule != nil {
		b, err := json.Marshal(a.PersistedRule)
		if err != nil {
			return err
		}
		rule = string(b)
	}
	_, err := tx.Exec(ctx, `UPDATE approval_asks SET status = $2, choice = $3, decided_by = $4, comment = $5,
		decided_at = $6, persisted_rule = $7 WHERE id = $1 AND status = 'pending'`,
		a.ID, string(a.Status), string(a.Choice), a.DecidedBy, a.Comment, *a.DecidedAt, rule)
	return err
}

// Get returns one stored ask, or approval.ErrNotFound.
func (s *Approvals) Get(ctx context.Context, id string) (approval.Approval, error) {
	if pg.Text(id) != id {
		return approval.Approval{}, approval.ErrNotFound
	}
	octx, cancel := s.db.Op(ctx)
	defer cancel()
	a, err := scanAsk(s.db.Pool().QueryRow(octx, `SELECT `+approvalCols+` FROM approval_asks WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return approval.Approval{}, approval.ErrNotFound
	}
	return a, s.db.Wrap(ctx, err, "get ask")
}

// Pending returns every pending ask, oldest first.
func (s *Approvals) Pending(ctx context.Context) ([]approval.Approval, error) {
	octx, cancel := s.db.Op(ctx)
	defer cancel()
	rows, err := s.db.Pool().Query(octx, `SELECT `+approvalCols+` FROM approval_asks
		WHERE status = 'pending' ORDER BY created_at, id`)
	if err != nil {
		return nil, s.db.Wrap(ctx, err, "pending asks")
	}
	list, err := scanAsks(rows)
	return list, s.db.Wrap(ctx, err, "pending asks")
}

// ExpireDue runs one round of expiry when this replica gets the expiry
// lease (a transaction-scoped advisory try-lock, so a replica that dies
// mid-round hands it on at once): one UPDATE expires every pending ask past
// its deadline, each is notified, and resolved asks older than keep are
// deleted.
func (s *Approvals) ExpireDue(ctx context.Context, now time.Time, keep time.Duration) ([]approval.Approval, error) {
	var expired []approval.Approval
	err := s.inTx(ctx, s.db.OpTimeout(), func(octx context.Context, tx pgx.Tx) error {
		var lease bool
		if err := tx.QueryRow(octx, `SELECT pg_try_advisory_xact_lock($1)`, expiryLockKey).Scan(&lease); err != nil || !lease {
			return err
		}
		rows, err := tx.Query(octx, `UPDATE approval_asks SET status = 'expired', decided_by = $2,
			comment = 'no answer before the timeout', decided_at = $1
			WHERE status = 'pending' AND expires_at <= $1
			RETURNING `+approvalCols, now, approval.PrincipalSystem)
		if err != nil {
			return err
		}
		if expired, err = scanAsks(rows); err != nil {
			return err
		}
		for _, a := range expired {
			if err := history.RecordApprovalTx(octx, tx, a); err != nil {
				return err
			}
			if err := notify(octx, tx, a.ID); err != nil {
				return err
			}
		}
		_, err = tx.Exec(octx, `DELETE FROM approval_asks WHERE status <> 'pending' AND decided_at < $1`, now.Add(-keep))
		return err
	})
	if err != nil {
		return nil, s.db.Wrap(ctx, err, "expire asks")
	}
	return expired, nil
}

// inTx runs fn in one transaction bounded by limit: one operation timeout,
// so that a database that does not answer fails an ask within it (the
// caller then denies), or more while a Persister writes under the row lock.
func (s *Approvals) inTx(ctx context.Context, limit time.Duration, fn func(context.Context, pgx.Tx) error) error {
	octx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	return pgx.BeginFunc(octx, s.db.Pool(), func(tx pgx.Tx) error { return fn(octx, tx) })
}

// notify tells every replica that ask id changed; PostgreSQL delivers it
// when the transaction commits, and not at all when it rolls back.
func notify(ctx context.Context, tx pgx.Tx, id string) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, pg.ChannelApprovals, id)
	return err
}

// scanAsk reads one row of approvalCols.
func scanAsk(row pgx.Row) (approval.Approval, error) {
	var a approval.Approval
	var status, choice string
	var body, rule []byte
	var decided *time.Time
	if err := row.Scan(&a.ID, &status, &a.CreatedAt, &a.ExpiresAt, &body, &a.Joins, &choice,
		&a.DecidedBy, &a.Comment, &decided, &rule); err != nil {
		return approval.Approval{}, err
	}
	var in asked
	if err := json.Unmarshal(body, &in); err != nil {
		return approval.Approval{}, fmt.Errorf("ask %s: request: %w", a.ID, err)
	}
	if rule != nil {
		if err := json.Unmarshal(rule, &a.PersistedRule); err != nil {
			return approval.Approval{}, fmt.Errorf("ask %s: persisted_rule: %w", a.ID, err)
		}
	}
	a.Request, a.Asked = in.Request, in.Asked
	a.Status, a.Choice = approval.Status(status), approval.Choice(choice)
	a.CreatedAt, a.ExpiresAt = a.CreatedAt.UTC(), a.ExpiresAt.UTC()
	if decided != nil {
		t := decided.UTC()
		a.DecidedAt = &t
		a.Decision = approval.Outcome{Status: a.Status}.Decision()
	}
	return a, nil
}

// scanAsks reads every row of approvalCols and closes rows.
func scanAsks(rows pgx.Rows) ([]approval.Approval, error) {
	defer rows.Close()
	var out []approval.Approval
	for rows.Next() {
		a, err := scanAsk(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
