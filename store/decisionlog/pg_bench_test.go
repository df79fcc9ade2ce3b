package decisionlog

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store/pg"
)

// benchDecisionLog opens a decision log on a fresh database of the shared
// test cluster (fsync off: see pgtest).
func benchDecisionLog(b *testing.B, opts Options) *PGLog {
	b.Helper()
	db, err := pg.Open(context.Background(), pgtest.Shared(b).NewDatabase(b), pg.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	l, err := OpenPG(context.Background(), db, PGOptions{Options: opts})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

// benchCall is the call every benchmark entry logs, the one the SQLite
// log's benchmark logs (redactingCall: logcall imports this package).
var benchCall = &redactingCall{tool: "bash", args: map[string]any{"command": "git push --force origin main"}}

// BenchmarkPGDecisionLogInsert writes batches of 512 entries (the writer's
// default batch) straight through the writer's path (redaction, one COPY);
// ns/op is per entry. store/decisionlog has the SQLite twin.
func BenchmarkPGDecisionLogInsert(b *testing.B) {
	l := benchDecisionLog(b, Options{})
	batch := make([]Entry, 512)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += len(batch) {
		for i := range batch {
			batch[i] = Entry{Source: "evaluate", Call: benchCall, Level: "deny", MatchedRule: "builtin:git-force-push"}
		}
		rows, err := l.rows(batch)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.copyRows(context.Background(), rows); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPGDecisionLogEnqueueFlush measures what each log sustains end to
// end with default options: b.N entries through Enqueue (one goroutine,
// as fast as the queue takes them, re-offering a dropped one) and a final
// Flush; ns/op is per entry written. It also reports the CPU time per
// entry of this process and, for pg, of the server (read from /proc).
func BenchmarkPGDecisionLogEnqueueFlush(b *testing.B) {
	for _, backend := range []string{"sqlite", "pg"} {
		b.Run(backend, func(b *testing.B) {
			var l interface {
				Enqueue(Entry) bool
				Flush(context.Context) error
				Written() uint64
			}
			var server func() time.Duration
			if backend == "pg" {
				pl := benchDecisionLog(b, Options{})
				l, server = pl, func() time.Duration { return serverCPU(pl.db) }
			} else {
				sl, err := Open(filepath.Join(b.TempDir(), "decisions.db"), Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { sl.Close() })
				l = sl
			}
			b.ReportAllocs()
			cpu0, server0 := processCPU(), time.Duration(0)
			if server != nil {
				server0 = server()
			}
			b.ResetTimer()
			for range b.N {
				for !l.Enqueue(Entry{Source: "evaluate", Call: benchCall, Level: "deny", MatchedRule: "builtin:git-force-push"}) {
					time.Sleep(50 * time.Microsecond)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := l.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if l.Written() != uint64(b.N) {
				b.Fatalf("written %d of %d", l.Written(), b.N)
			}
			// CPU per entry, which the machine's load does not inflate as it
			// does wall time: this process's, and the server's for pg.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/entry")
			if server != nil {
				b.ReportMetric(float64(server()-server0)/float64(b.N), "server-cpu-ns/entry")
			}
		})
	}
}
