package history

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/approval"
)

// Columns lists the approval history columns in the order ScanApproval
// reads them. The SQLite table and the PostgreSQL one (pg.go) share the layout,
// so both select these columns and read rows with ScanApproval.
const Columns = `id, status, created_at, expires_at, decided_at, tool_name, tool_args, channel_id,
	session_id, workspace, matched_rule, reason, external_paths, choice, decided_by, comment, decision,
	persisted_rule, joins, cause, agent, grant_json`

// RowScanner is one result row: *sql.Rows and pgx.Row both satisfy it.
type RowScanner interface {
	Scan(dest ...any) error
}

// ScanApproval reads one row of Columns. Times are Unix nanoseconds;
// decided_at is NULL while the approval is pending; tool_args,
// external_paths and persisted_rule hold JSON (persisted_rule may be empty);
// cause, agent and grant_json are empty for a row recorded before the
// history kept them; grant_json holds the grant an answer made, as JSON.
func ScanApproval(row RowScanner) (approval.Approval, error) {
	var a approval.Approval
	var created, expires int64
	var decided *int64
	var status, choice, args, paths, rule, granted string
	err := row.Scan(&a.ID, &status, &created, &expires, &decided, &a.Request.ToolName, &args,
		&a.Request.ChannelID, &a.Request.SessionID, &a.Request.Workspace, &a.Asked.MatchedRule,
		&a.Asked.Reason, &paths, &choice, &a.DecidedBy, &a.Comment, &a.Decision, &rule, &a.Joins, &a.Asked.Cause,
		&a.Request.Agent, &granted)
	if err != nil {
		return a, err
	}
	a.Status, a.Choice = approval.Status(status), approval.Choice(choice)
	a.CreatedAt, a.ExpiresAt = time.Unix(0, created).UTC(), time.Unix(0, expires).UTC()
	if decided != nil {
		t := time.Unix(0, *decided).UTC()
		a.DecidedAt = &t
	}
	if err := json.Unmarshal([]byte(args), &a.Request.ToolArgs); err != nil {
		return a, fmt.Errorf("tool_args of %s: %w", a.ID, err)
	}
	if err := json.Unmarshal([]byte(paths), &a.Asked.ExternalPaths); err != nil {
		return a, fmt.Errorf("external_paths of %s: %w", a.ID, err)
	}
	if len(a.Asked.ExternalPaths) == 0 {
		a.Asked.ExternalPaths = nil
	}
	if granted != "" {
		if err := json.Unmarshal([]byte(granted), &a.Grant); err != nil {
			return a, fmt.Errorf("grant_json of %s: %w", a.ID, err)
		}
	}
	if rule != "" {
		if err := json.Unmarshal([]byte(rule), &a.PersistedRule); err != nil {
			return a, fmt.Errorf("persisted_rule of %s: %w", a.ID, err)
		}
	}
	return a, nil
}
