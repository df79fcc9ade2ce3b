package decisionlog

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/redact"
)

// BenchmarkDecisionLogInsert writes batches of 512 entries (the writer's
// default batch) straight through insert; ns/op is per entry.
func BenchmarkDecisionLogInsert(b *testing.B) {
	db, _ := openDecisionTestDB(b)
	l := newLog(db, Options{})
	defer l.Close()
	call := &redactingCall{tool: "bash", args: map[string]any{"command": "git push --force origin main"}}
	batch := make([]Entry, 512)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += len(batch) {
		for i := range batch {
			batch[i] = Entry{Source: "evaluate", Call: call, Level: "deny", MatchedRule: "builtin:git-force-push"}
		}
		if err := l.insert(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
}

// redactingCall is a Call that fills the summary as logcall's does for a
// call without a shadow policy (logcall imports this package, so its calls
// cannot be used here).
type redactingCall struct {
	tool string
	args map[string]any
}

func (c *redactingCall) Prepare(e *Entry) {
	if e.Summary == "" {
		e.Summary = redact.Summarize(c.tool, c.args)
	}
}
