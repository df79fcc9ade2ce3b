package decisionlog

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/engine"
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
		e.Summary = redact.Summarize(engine.NewCall(c.tool, c.args))
	}
}

// BenchmarkDecisionLogInsertIndexes is BenchmarkDecisionLogInsert for rows
// without a session (REST evaluate's) under the schema as it is, with the
// session index whole again (as before migration 5), with the time index
// back (as before migration 6), with each index dropped in turn, or all of
// them, to show what each costs a row; ns/op is per entry.
func BenchmarkDecisionLogInsertIndexes(b *testing.B) {
	for _, c := range []struct{ name, sql string }{
		{"schema", ""},
		{"full_session_index", "DROP INDEX decisions_session; CREATE INDEX decisions_session ON decisions(session, id)"},
		{"ts_index", "CREATE INDEX decisions_ts ON decisions(ts)"},
		{"no_tool", "DROP INDEX decisions_tool"},
		{"no_session", "DROP INDEX decisions_session"},
		{"no_agent", "DROP INDEX decisions_agent"},
		{"none", "DROP INDEX decisions_tool; DROP INDEX decisions_session; DROP INDEX decisions_agent"},
	} {
		b.Run(c.name, func(b *testing.B) {
			db, _ := openDecisionTestDB(b)
			if c.sql != "" {
				if _, err := db.SQL().Exec(c.sql); err != nil {
					b.Fatal(err)
				}
			}
			l := newLog(db, Options{})
			defer l.Close()
			call := &redactingCall{tool: "bash", args: map[string]any{"command": "npm run build --silent"}}
			batch := make([]Entry, 512)
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += len(batch) {
				for i := range batch {
					batch[i] = Entry{Source: "evaluate", Call: call, Level: "allow", MatchedRule: "tools.bash"}
				}
				if err := l.insert(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
