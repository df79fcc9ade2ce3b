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
	tag, err := tx.Exec(ctx, upsertSQL(pgDialect), rowValues(a, t, pgDialect)...)
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
	sql, args, err := q.listSQL(pgDialect)
	if err != nil {
		return Page{}, err
	}
	list, err := h.list(ctx, "list approvals", sql, args...)
	if err != nil {
		return Page{}, err
	}
	return NewPage(list, q.PageSize()), nil
}

// pgDialect writes the history's SQL for approval_history: text through
// pg.Text; in a cursor, ids compare as text, times as bigint.
var pgDialect = dialect{table: "approval_history", param: func(i int) string { return "$" + strconv.Itoa(i) }, text: pg.Text,
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
