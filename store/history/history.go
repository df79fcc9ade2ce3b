// Package history is the approval history: every ask's latest state and
// each change of it (who answered what, when), in the embedded SQLite file
// approvals.db (Store) or, with --database-url, in PostgreSQL shared by
// every replica (PGStore, pg.go). The approval manager writes it off the
// request path; the API and the pages read it. The SQLite file holds only
// its own tables and migrations; the PostgreSQL steps are store/pg's
// schema part "history".
package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/store/sqlite"
)

// approvalHistorySchema holds one row per approval (its latest state) and one
// row per state change (who answered what, when, with which choice).
const approvalHistorySchema = `
CREATE TABLE approvals (
	id             TEXT PRIMARY KEY,
	status         TEXT NOT NULL,
	created_at     INTEGER NOT NULL,
	expires_at     INTEGER NOT NULL,
	decided_at     INTEGER,
	tool_name      TEXT NOT NULL,
	tool_args      TEXT NOT NULL,
	channel_id     TEXT NOT NULL,
	session_id     TEXT NOT NULL,
	workspace      TEXT NOT NULL,
	matched_rule   TEXT NOT NULL,
	reason         TEXT NOT NULL,
	external_paths TEXT NOT NULL,
	choice         TEXT NOT NULL,
	decided_by     TEXT NOT NULL,
	comment        TEXT NOT NULL,
	decision       TEXT NOT NULL,
	persisted_rule TEXT NOT NULL,
	joins          INTEGER NOT NULL
);
CREATE INDEX approvals_by_created ON approvals (created_at DESC, id DESC);
CREATE INDEX approvals_by_status ON approvals (status, created_at DESC, id DESC);
CREATE TABLE approval_events (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	approval_id TEXT NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
	at          INTEGER NOT NULL,
	status      TEXT NOT NULL,
	choice      TEXT NOT NULL,
	actor       TEXT NOT NULL,
	comment     TEXT NOT NULL
);
CREATE INDEX approval_events_by_approval ON approval_events (approval_id, seq);
`

// approvalCauseSchema keeps the step that asked (approval.Asked.Cause), so
// that an answer read back from the history says why it was asked rather
// than a guess from its paths. Rows recorded before it read back with an
// empty cause, which the pages treat as unknown.
const approvalCauseSchema = `ALTER TABLE approvals ADD COLUMN cause TEXT NOT NULL DEFAULT '';`

// approvalGrantSchema keeps the runtime that asked and the grant an answer
// made (grant_json, its pattern masked), so that an answer read back after
// a restart still says who asked and what it allowed until when. Rows
// recorded before it read back with neither.
const approvalGrantSchema = `ALTER TABLE approvals ADD COLUMN agent TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN grant_json TEXT NOT NULL DEFAULT '';`

// migrations are the schema history of approvals.db. Version 1 keeps the
// number it had when every database shared one list.
var migrations = []sqlite.Migration{
	{Version: 1, Name: "approval history", SQL: approvalHistorySchema},
	{Version: 2, Name: "approval cause", SQL: approvalCauseSchema},
	{Version: 3, Name: "approval agent and grant", SQL: approvalGrantSchema},
}

// Store is the approval history. It satisfies approval.History.
type Store struct {
	db *sqlite.DB
}

// File is the approval history's SQLite file in the config dir.
const File = "approvals.db"

// Open opens (creating if needed) the history's SQLite file at path and
// applies its migrations.
func Open(path string) (*Store, error) {
	db, err := sqlite.Open(path, migrations)
	if err != nil {
		return nil, fmt.Errorf("approval history: %w", err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Event is one recorded state change of an approval.
type Event struct {
	Seq        int64           `json:"seq"`
	ApprovalID string          `json:"approval_id"`
	At         time.Time       `json:"at"`
	Status     approval.Status `json:"status"`
	Choice     approval.Choice `json:"choice,omitempty"`
	Actor      string          `json:"actor,omitempty"`
	Comment    string          `json:"comment,omitempty"`
}

// Query selects a page of history, newest first.
type Query struct {
	// Status limits to one status; empty means all.
	Status approval.Status
	// SessionID limits to one session; empty means all.
	SessionID string
	// Limit is the page size: default 50, at most 500.
	Limit int
	// Cursor is the NextCursor of the previous page; empty starts at the newest.
	Cursor string
}

// Page is one page of history.
type Page struct {
	Approvals []approval.Approval `json:"approvals"`
	// NextCursor fetches the next (older) page; empty on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// ErrBadCursor is returned for a cursor ListApprovals did not produce.
var ErrBadCursor = errors.New("history: bad history cursor")

// RecordApproval stores the state of an approval and, when the state
// changed, one event row. Tool arguments are redacted before they are
// written. A resolved approval is never moved back to pending, so a late or
// repeated write cannot undo an answer. The asked fields are written once,
// with the ask; only a cause or agent the row lacks (recorded before the
// history kept them) is filled in by a later write. The answer writes the
// grant it made. It satisfies approval.History.
func (s *Store) RecordApproval(ctx context.Context, a approval.Approval) error {
	t, err := Encode(a)
	if err != nil {
		return fmt.Errorf("history: record approval %s: %w", a.ID, err)
	}
	tx, err := s.db.SQL().BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("history: record approval %s: %w", a.ID, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, upsertSQL(sqliteDialect), rowValues(a, t, sqliteDialect)...)
	if err != nil {
		return fmt.Errorf("history: record approval %s: %w", a.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		// Nothing changed: a repeat, or a late write after the answer. A
		// grant made after its answer was stored (by a replica in shared
		// mode) joins that answer's row.
		if t.Grant == "" || a.DecidedAt == nil {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE approvals SET grant_json = ? WHERE id = ? AND grant_json = ''
			AND status = ? AND decided_at = ? AND choice = ?`, t.Grant, a.ID, string(a.Status), a.DecidedAt.UnixNano(), string(a.Choice)); err != nil {
			return fmt.Errorf("history: record grant of %s: %w", a.ID, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("history: record grant of %s: %w", a.ID, err)
		}
		return nil
	}
	at := a.CreatedAt
	if a.DecidedAt != nil {
		at = *a.DecidedAt
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO approval_events (approval_id, at, status, choice, actor, comment)
		VALUES (?, ?, ?, ?, ?, ?)`, a.ID, at.UnixNano(), string(a.Status), string(a.Choice), a.DecidedBy, a.Comment); err != nil {
		return fmt.Errorf("history: record approval event %s: %w", a.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("history: record approval %s: %w", a.ID, err)
	}
	return nil
}

// PendingApprovals returns every approval recorded as pending, oldest
// first. It satisfies approval.History.
func (s *Store) PendingApprovals(ctx context.Context) ([]approval.Approval, error) {
	rows, err := s.db.SQL().QueryContext(ctx, `SELECT `+Columns+` FROM approvals
		WHERE status = 'pending' ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("history: pending approvals: %w", err)
	}
	return scanApprovals(rows)
}

// GetApproval returns the recorded state of one approval, or
// approval.ErrNotFound.
func (s *Store) GetApproval(ctx context.Context, id string) (approval.Approval, error) {
	rows, err := s.db.SQL().QueryContext(ctx, `SELECT `+Columns+` FROM approvals WHERE id = ?`, id)
	if err != nil {
		return approval.Approval{}, fmt.Errorf("history: get approval: %w", err)
	}
	return theOne(scanApprovals(rows))
}

// theOne is the approval a read by id found, approval.ErrNotFound when it
// found none.
func theOne(list []approval.Approval, err error) (approval.Approval, error) {
	if err != nil {
		return approval.Approval{}, err
	}
	if len(list) == 0 {
		return approval.Approval{}, approval.ErrNotFound
	}
	return list[0], nil
}

// ListApprovals returns one page of history, newest first.
func (s *Store) ListApprovals(ctx context.Context, q Query) (Page, error) {
	query, args, err := q.listSQL(sqliteDialect)
	if err != nil {
		return Page{}, err
	}
	rows, err := s.db.SQL().QueryContext(ctx, query, args...)
	if err != nil {
		return Page{}, fmt.Errorf("history: list approvals: %w", err)
	}
	list, err := scanApprovals(rows)
	if err != nil {
		return Page{}, err
	}
	return NewPage(list, q.PageSize()), nil
}

// sqliteDialect writes the history's SQL for the approvals table of
// approvals.db.
var sqliteDialect = dialect{table: "approvals", param: func(int) string { return "?" },
	cursor: func(ts int64, id string, arg func(any) string) string {
		return "(created_at < " + arg(ts) + " OR (created_at = " + arg(ts) + " AND id < " + arg(id) + "))"
	}}

// ApprovalEvents returns the recorded state changes of one approval, in order.
func (s *Store) ApprovalEvents(ctx context.Context, id string) ([]Event, error) {
	rows, err := s.db.SQL().QueryContext(ctx, `SELECT seq, approval_id, at, status, choice, actor, comment
		FROM approval_events WHERE approval_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("history: approval events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var at int64
		var st, ch string
		if err := rows.Scan(&e.Seq, &e.ApprovalID, &at, &st, &ch, &e.Actor, &e.Comment); err != nil {
			return nil, fmt.Errorf("history: approval events: %w", err)
		}
		e.At, e.Status, e.Choice = time.Unix(0, at).UTC(), approval.Status(st), approval.Choice(ch)
		out = append(out, e)
	}
	return out, rows.Err()
}

// parseCursor reads a cursor of ListApprovals: "<unix nanos>.<id>".
func parseCursor(c string) (int64, string, error) {
	ts, id, ok := strings.Cut(c, ".")
	n, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil || id == "" {
		return 0, "", fmt.Errorf("%w: %q", ErrBadCursor, c)
	}
	return n, id, nil
}

func scanApprovals(rows *sql.Rows) ([]approval.Approval, error) {
	defer rows.Close()
	var out []approval.Approval
	for rows.Next() {
		a, err := ScanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("history: read approval: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func nanosOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixNano()
}
