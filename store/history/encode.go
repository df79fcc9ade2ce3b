package history

import (
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/redact"
)

// Texts are the JSON columns of an approval's row, written the same way by
// the SQLite and the PostgreSQL history, so that ScanApproval reads both.
type Texts struct {
	// Args is tool_args, redacted.
	Args string
	// Paths is external_paths, [] when there are none.
	Paths string
	// Rule is persisted_rule, empty without one.
	Rule string
	// Grant is grant_json, the grant an allow_session or allow_for answer
	// made, its pattern masked as everywhere it is shown (the grants store
	// keeps the one that matches); empty without one.
	Grant string
}

// Encode writes the JSON columns of a.
func Encode(a approval.Approval) (Texts, error) {
	args, err := json.Marshal(redact.Args(a.Request.ToolArgs))
	if err != nil {
		return Texts{}, fmt.Errorf("tool_args: %w", err)
	}
	paths := a.Asked.ExternalPaths
	if paths == nil {
		paths = []string{}
	}
	pathsJSON, _ := json.Marshal(paths)
	t := Texts{Args: string(args), Paths: string(pathsJSON)}
	if a.PersistedRule != nil {
		b, _ := json.Marshal(a.PersistedRule)
		t.Rule = string(b)
	}
	if a.Grant != nil {
		g := *a.Grant
		g.Pattern = redact.Text(g.Pattern)
		b, _ := json.Marshal(g)
		t.Grant = string(b)
	}
	return t, nil
}
