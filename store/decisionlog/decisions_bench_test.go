package decisionlog

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/engine"
)

// BenchmarkDecisionLogInsert writes batches of 512 entries (the writer's
// default batch) straight through insert; ns/op is per entry.
func BenchmarkDecisionLogInsert(b *testing.B) {
	db, _ := openDecisionTestDB(b)
	l := newLog(db, Options{})
	defer l.Close()
	call := &engine.Request{ToolName: "bash", ToolArgs: map[string]any{"command": "git push --force origin main"}, ChannelID: "web"}
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
