package history

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/store/pg"
)

// PGStore is the approval history of every replica in PostgreSQL. It has
// the method set of Store and answers as it does, and satisfies
// approval.History. It is safe for concurrent use.
type PGStore struct {
	db *pg.DB
}

var _ approval.History = (*PGStore)(nil)

// OpenPG migrates the approval history's tables in db and returns it.
func OpenPG(ctx context.Context, db *pg.DB) (*PGStore, error) {
	if err := pg.MigrateParts(ctx, db, pg.PartHistory); err != nil {
		return nil, err
	}
	return &PGStore{db: db}, nil
}

// Close is there for Store's method set; the DB stays open (its
// owner closes it).
func (h *PGStore) Close() error { return nil }

// RecordApproval stores the state of an approval and, when the state
// changed, one event row, in one transaction (see RecordApprovalTx). It
// satisfies approval.History.
func (h *PGStore) RecordApproval(ctx context.Context, a approval.Approval) error {
	octx, cancel := h.db.Op(ctx)
	defer cancel()
	err := pgx.BeginFunc(octx, h.db.Pool(), func(tx pgx.Tx) error { return RecordApprovalTx(octx, tx, a) })
	return h.db.Wrap(ctx, err, "record approval "+a.ID)
}

// RecordApprovalTx records a in tx: the latest state of the approval and,
// when it changed, one event row. Tool arguments are redacted before they
// are written (as JSON, where a NUL is escaped); a NUL or non-UTF-8 byte in
// another text becomes U+FFFD (see pg.Text). A resolved approval is never
// moved back to pending, so a late or repeated write (another replica
// recording the same change) cannot undo an answer or add a second event:
// the conditional upsert waits for a concurrent one and then finds nothing
// to change. The shared asks (store/asks) call it inside the
// transaction that changes an ask, so that the history cannot miss a change
// when a replica dies before its PGStore writer runs; the PGStore's own
// later write of the same state then changes nothing. The asked fields are
// written once, with the ask; only a cause or agent the row lacks
// (recorded before the history kept them) is filled in by a later write.
// The answer writes the grant it made.
func RecordApprovalTx(ctx context.Context, tx pgx.Tx, a approval.Approval) error {
	t, err := Encode(a)
	if err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, `INSERT INTO approval_history (id, status, created_at, expires_at, decided_at,
		tool_name, tool_args, channel_id, session_id, workspace, matched_rule, reason, external_paths,
		choice, decided_by, comment, decision, persisted_rule, joins, cause, agent, grant_json)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, decided_at = excluded.decided_at,
			choice = excluded.choice, decided_by = excluded.decided_by, comment = excluded.comment,
			decision = excluded.decision, persisted_rule = excluded.persisted_rule, joins = excluded.joins,
			cause = CASE WHEN approval_history.cause = '' THEN excluded.cause ELSE approval_history.cause END,
			agent = CASE WHEN approval_history.agent = '' THEN excluded.agent ELSE approval_history.agent END,
			grant_json = excluded.grant_json
		WHERE approval_history.status = 'pending' AND excluded.status <> 'pending'`,
		pg.Text(a.ID), pg.Text(string(a.Status)), a.CreatedAt.UnixNano(), a.ExpiresAt.UnixNano(), unixNanoOrNil(a.DecidedAt),
		pg.Text(a.Request.ToolName), t.Args, pg.Text(a.Request.ChannelID), pg.Text(a.Request.SessionID),
		pg.Text(a.Request.Workspace), pg.Text(a.Asked.MatchedRule), pg.Text(a.Asked.Reason), t.Paths,
		pg.Text(string(a.Choice)), pg.Text(a.DecidedBy), pg.Text(a.Comment), pg.Text(a.Decision), t.Rule, a.Joins,
		pg.Text(a.Asked.Cause), pg.Text(a.Request.Agent), t.Grant)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		// Nothing changed: a repeat, or a late write after the answer. A
		// grant made after its answer was stored (the shared asks store the
		// answer before the manager has its grant) joins that answer's row.
		if t.Grant == "" || a.DecidedAt == nil {
			return nil
		}
		_, err = tx.Exec(ctx, `UPDATE approval_history SET grant_json = $2 WHERE id = $1 AND grant_json = ''
			AND status = $3 AND decided_at = $4 AND choice = $5`,
			pg.Text(a.ID), t.Grant, pg.Text(string(a.Status)), a.DecidedAt.UnixNano(), pg.Text(string(a.Choice)))
		return err
	}
	at := a.CreatedAt
	if a.DecidedAt != nil {
		at = *a.DecidedAt
	}
	_, err = tx.Exec(ctx, `INSERT INTO approval_history_events (approval_id, at, status, choice, actor, comment)
		VALUES ($1, $2, $3, $4, $5, $6)`, pg.Text(a.ID), at.UnixNano(), pg.Text(string(a.Status)), pg.Text(string(a.Choice)),
		pg.Text(a.DecidedBy), pg.Text(a.Comment))
	return err
}

// PendingApprovals returns every approval recorded as pending, oldest
// first. It satisfies approval.History.
func (h *PGStore) PendingApprovals(ctx context.Context) ([]approval.Approval, error) {
	return h.list(ctx, "pending approvals", `SELECT `+Columns+` FROM approval_history
		WHERE status = 'pending' ORDER BY created_at, id`)
}

// GetApproval returns the recorded state of one approval, or
// approval.ErrNotFound.
func (h *PGStore) GetApproval(ctx context.Context, id string) (approval.Approval, error) {
	return theOne(h.list(ctx, "get approval", `SELECT `+Columns+` FROM approval_history WHERE id = $1`, pg.Text(id)))
}

// ListApprovals returns one page of history, newest first; its cursors are
// those of Store.
func (h *PGStore) ListApprovals(ctx context.Context, q Query) (Page, error) {
	sql, args, err := q.listSQL(pgList)
	if err != nil {
		return Page{}, err
	}
	list, err := h.list(ctx, "list approvals", sql, args...)
	if err != nil {
		return Page{}, err
	}
	return NewPage(list, q.PageSize()), nil
}

// pgList writes ListApprovals' query for approval_history; ids compare as
// text, times as bigint.
var pgList = listDialect{table: "approval_history", param: func(i int) string { return "$" + strconv.Itoa(i) }, text: pg.Text,
	cursor: func(ts int64, id string, arg func(any) string) string {
		return "(created_at, id) < (" + arg(ts) + "::bigint, " + arg(id) + "::text)"
	}}

// ApprovalEvents returns the recorded state changes of one approval, in
// order.
func (h *PGStore) ApprovalEvents(ctx context.Context, id string) ([]Event, error) {
	octx, cancel := h.db.Op(ctx)
	defer cancel()
	rows, err := h.db.Pool().Query(octx, `SELECT seq, approval_id, at, status, choice, actor, comment
		FROM approval_history_events WHERE approval_id = $1 ORDER BY seq`, pg.Text(id))
	if err != nil {
		return nil, h.db.Wrap(ctx, err, "approval events")
	}
	var out []Event
	var e Event
	var at int64
	var st, ch string
	_, err = pgx.ForEachRow(rows, []any{&e.Seq, &e.ApprovalID, &at, &st, &ch, &e.Actor, &e.Comment}, func() error {
		e.At, e.Status, e.Choice = time.Unix(0, at).UTC(), approval.Status(st), approval.Choice(ch)
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, h.db.Wrap(ctx, err, "approval events")
	}
	return out, nil
}

// list runs a SELECT of Columns and reads its approvals.
func (h *PGStore) list(ctx context.Context, what, sql string, args ...any) ([]approval.Approval, error) {
	octx, cancel := h.db.Op(ctx)
	defer cancel()
	rows, err := h.db.Pool().Query(octx, sql, args...)
	if err != nil {
		return nil, h.db.Wrap(ctx, err, what)
	}
	defer rows.Close()
	var out []approval.Approval
	for rows.Next() {
		a, err := ScanApproval(rows)
		if err != nil {
			return nil, h.db.Wrap(ctx, err, what)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, h.db.Wrap(ctx, err, what)
	}
	return out, nil
}

func unixNanoOrNil(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	n := t.UnixNano()
	return &n
}
