package history

import (
	"strconv"

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
