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

// listDialect is how one history's SQL writes ListApprovals' query.
type listDialect struct {
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
func (q Query) listSQL(d listDialect) (string, []any, error) {
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
