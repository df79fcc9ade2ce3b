package history

import (
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/approval"
)

// PageSize is the page size q asks for: 50 when unset, at most 500.
func (q Query) PageSize() int {
	if q.Limit <= 0 {
		return 50
	}
	return min(q.Limit, 500)
}

// NewPage makes a page of size from list, read newest first with one row
// more than size: that extra row, when there, says a next page exists, and
// the cursor names the page's last approval (created_at nanoseconds, ".", id).
func NewPage(list []approval.Approval, size int) Page {
	page := Page{Approvals: list}
	if len(list) > size {
		page.Approvals = list[:size]
		last := list[size-1]
		page.NextCursor = strconv.FormatInt(last.CreatedAt.UnixNano(), 10) + "." + last.ID
	}
	return page
}

// dialect is how one history's SQL writes its statements.
type dialect struct {
	// table holds the approvals' latest states.
	table string
	// param is the placeholder of the i-th argument (from 1).
	param func(i int) string
	// text is what a string argument becomes (nil: itself).
	text func(string) string
	// cursor is the condition "before the cursor's (created_at, id)";
	// arg adds an argument and returns its placeholder.
	cursor func(ts int64, id string, arg func(any) string) string
}

// listSQL is the query of one page of q, newest first, in d's SQL, with
// its arguments: one more row than the page size, so that NewPage knows
// whether a next page exists.
func (q Query) listSQL(d dialect) (string, []any, error) {
	var where []string
	var args []any
	arg := func(v any) string {
		if s, ok := v.(string); ok && d.text != nil {
			v = d.text(s)
		}
		args = append(args, v)
		return d.param(len(args))
	}
	if q.Status != "" {
		where = append(where, "status = "+arg(string(q.Status)))
	}
	if q.SessionID != "" {
		where = append(where, "session_id = "+arg(q.SessionID))
	}
	if q.Cursor != "" {
		ts, id, err := parseCursor(q.Cursor)
		if err != nil {
			return "", nil, err
		}
		where = append(where, d.cursor(ts, id, arg))
	}
	sql := `SELECT ` + Columns + ` FROM ` + d.table
	if len(where) > 0 {
		sql += ` WHERE ` + strings.Join(where, " AND ")
	}
	return sql + ` ORDER BY created_at DESC, id DESC LIMIT ` + arg(q.PageSize()+1), args, nil
}

// upsertSQL records an approval's latest state in d's table (see
// Store.RecordApproval): a new row, or the change of a pending one to an
// outcome; a cause or agent the row lacks is filled in. Its arguments are
// rowValues'.
func upsertSQL(d dialect) string {
	ps := make([]string, 22)
	for i := range ps {
		ps[i] = d.param(i + 1)
	}
	return `INSERT INTO ` + d.table + ` (id, status, created_at, expires_at, decided_at,
		tool_name, tool_args, channel_id, session_id, workspace, matched_rule, reason, external_paths,
		choice, decided_by, comment, decision, persisted_rule, joins, cause, agent, grant_json)
		VALUES (` + strings.Join(ps, ", ") + `)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, decided_at = excluded.decided_at,
			choice = excluded.choice, decided_by = excluded.decided_by, comment = excluded.comment,
			decision = excluded.decision, persisted_rule = excluded.persisted_rule, joins = excluded.joins,
			cause = CASE WHEN ` + d.table + `.cause = '' THEN excluded.cause ELSE ` + d.table + `.cause END,
			agent = CASE WHEN ` + d.table + `.agent = '' THEN excluded.agent ELSE ` + d.table + `.agent END,
			grant_json = excluded.grant_json
		WHERE ` + d.table + `.status = 'pending' AND excluded.status <> 'pending'`
}

// rowValues are upsertSQL's arguments for a, whose JSON columns are t;
// times in unix nanoseconds (decided_at NULL while pending), other text
// through d.text.
func rowValues(a approval.Approval, t Texts, d dialect) []any {
	text := func(s string) string { return s }
	if d.text != nil {
		text = d.text
	}
	return []any{text(a.ID), text(string(a.Status)), a.CreatedAt.UnixNano(), a.ExpiresAt.UnixNano(), nanosOrNil(a.DecidedAt),
		text(a.Request.ToolName), t.Args, text(a.Request.ChannelID), text(a.Request.SessionID), text(a.Request.Workspace),
		text(a.Asked.MatchedRule), text(a.Asked.Reason), t.Paths,
		text(string(a.Choice)), text(a.DecidedBy), text(a.Comment), text(a.Decision), t.Rule, a.Joins,
		text(a.Asked.Cause), text(a.Request.Agent), t.Grant}
}
