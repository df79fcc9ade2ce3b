package pg

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/store/history"
)

// History is the approval history of every replica in PostgreSQL. It has
// the method set of history.Store and answers as it does, and satisfies
// approval.History. It is safe for concurrent use.
type History struct {
	db *DB
}

var _ approval.History = (*History)(nil)

// OpenHistory migrates the approval history's tables in db and returns it.
func OpenHistory(ctx context.Context, db *DB) (*History, error) {
	if err := MigrateParts(ctx, db, PartHistory); err != nil {
		return nil, err
	}
	return &History{db: db}, nil
}

// Close is there for history.Store's method set; the DB stays open (its
// owner closes it).
func (h *History) Close() error { return nil }

// RecordApproval stores the state of an approval and, when the state
// changed, one event row, in one transaction (see recordApprovalTx). It
// satisfies approval.History.
func (h *History) RecordApproval(ctx context.Context, a approval.Approval) error {
	octx, cancel := h.db.Op(ctx)
	defer cancel()
	err := pgx.BeginFunc(octx, h.db.pool, func(tx pgx.Tx) error { return recordApprovalTx(octx, tx, a) })
	return h.db.Wrap(ctx, err, "record approval "+a.ID)
}

// recordApprovalTx records a in tx: the latest state of the approval and,
// when it changed, one event row. Tool arguments are redacted before they
// are written (as JSON, where a NUL is escaped); a NUL or non-UTF-8 byte in
// another text becomes U+FFFD (see pgText). A resolved approval is never
// moved back to pending, so a late or repeated write (another replica
// recording the same change) cannot undo an answer or add a second event:
// the conditional upsert waits for a concurrent one and then finds nothing
// to change. The shared asks (approvals.go) may call it inside the
// transaction that changes an ask, so that the history cannot miss a change
// when a replica dies before its History writer runs; the History's own
// later write of the same state then changes nothing. The asked fields are
// written once, with the ask; only a cause or agent the row lacks
// (recorded before the history kept them) is filled in by a later write.
// The answer writes the grant it made.
func recordApprovalTx(ctx context.Context, tx pgx.Tx, a approval.Approval) error {
	t, err := history.Encode(a)
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
		pgText(a.ID), pgText(string(a.Status)), a.CreatedAt.UnixNano(), a.ExpiresAt.UnixNano(), unixNanoOrNil(a.DecidedAt),
		pgText(a.Request.ToolName), t.Args, pgText(a.Request.ChannelID), pgText(a.Request.SessionID),
		pgText(a.Request.Workspace), pgText(a.Asked.MatchedRule), pgText(a.Asked.Reason), t.Paths,
		pgText(string(a.Choice)), pgText(a.DecidedBy), pgText(a.Comment), pgText(a.Decision), t.Rule, a.Joins,
		pgText(a.Asked.Cause), pgText(a.Request.Agent), t.Grant)
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
			pgText(a.ID), t.Grant, pgText(string(a.Status)), a.DecidedAt.UnixNano(), pgText(string(a.Choice)))
		return err
	}
	at := a.CreatedAt
	if a.DecidedAt != nil {
		at = *a.DecidedAt
	}
	_, err = tx.Exec(ctx, `INSERT INTO approval_history_events (approval_id, at, status, choice, actor, comment)
		VALUES ($1, $2, $3, $4, $5, $6)`, pgText(a.ID), at.UnixNano(), pgText(string(a.Status)), pgText(string(a.Choice)),
		pgText(a.DecidedBy), pgText(a.Comment))
	return err
}

// PendingApprovals returns every approval recorded as pending, oldest
// first. It satisfies approval.History.
func (h *History) PendingApprovals(ctx context.Context) ([]approval.Approval, error) {
	return h.list(ctx, "pending approvals", `SELECT `+history.Columns+` FROM approval_history
		WHERE status = 'pending' ORDER BY created_at, id`)
}

// GetApproval returns the recorded state of one approval, or
// approval.ErrNotFound.
func (h *History) GetApproval(ctx context.Context, id string) (approval.Approval, error) {
	list, err := h.list(ctx, "get approval", `SELECT `+history.Columns+` FROM approval_history WHERE id = $1`, pgText(id))
	if err != nil {
		return approval.Approval{}, err
	}
	if len(list) == 0 {
		return approval.Approval{}, approval.ErrNotFound
	}
	return list[0], nil
}

// ListApprovals returns one page of history, newest first; its cursors are
// those of history.Store.
func (h *History) ListApprovals(ctx context.Context, q history.Query) (history.Page, error) {
	limit := q.PageSize()
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.Status != "" {
		where = append(where, "status = "+arg(pgText(string(q.Status))))
	}
	if q.SessionID != "" {
		where = append(where, "session_id = "+arg(pgText(q.SessionID)))
	}
	if q.Cursor != "" {
		ts, id, err := parseHistoryCursor(q.Cursor)
		if err != nil {
			return history.Page{}, err
		}
		where = append(where, "(created_at, id) < ("+arg(ts)+"::bigint, "+arg(pgText(id))+"::text)")
	}
	sql := `SELECT ` + history.Columns + ` FROM approval_history`
	if len(where) > 0 {
		sql += ` WHERE ` + strings.Join(where, " AND ")
	}
	sql += ` ORDER BY created_at DESC, id DESC LIMIT ` + arg(limit+1)
	list, err := h.list(ctx, "list approvals", sql, args...)
	if err != nil {
		return history.Page{}, err
	}
	return history.NewPage(list, limit), nil
}

// ApprovalEvents returns the recorded state changes of one approval, in
// order.
func (h *History) ApprovalEvents(ctx context.Context, id string) ([]history.Event, error) {
	octx, cancel := h.db.Op(ctx)
	defer cancel()
	rows, err := h.db.pool.Query(octx, `SELECT seq, approval_id, at, status, choice, actor, comment
		FROM approval_history_events WHERE approval_id = $1 ORDER BY seq`, pgText(id))
	if err != nil {
		return nil, h.db.Wrap(ctx, err, "approval events")
	}
	var out []history.Event
	var e history.Event
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

// parseHistoryCursor reads a cursor of ListApprovals: "<unix nanos>.<id>".
func parseHistoryCursor(c string) (int64, string, error) {
	ts, id, ok := strings.Cut(c, ".")
	n, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil || id == "" {
		return 0, "", fmt.Errorf("%w: %q", history.ErrBadCursor, c)
	}
	return n, id, nil
}

// list runs a SELECT of history.Columns and reads its approvals.
func (h *History) list(ctx context.Context, what, sql string, args ...any) ([]approval.Approval, error) {
	octx, cancel := h.db.Op(ctx)
	defer cancel()
	rows, err := h.db.pool.Query(octx, sql, args...)
	if err != nil {
		return nil, h.db.Wrap(ctx, err, what)
	}
	defer rows.Close()
	var out []approval.Approval
	for rows.Next() {
		a, err := history.ScanApproval(rows)
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
