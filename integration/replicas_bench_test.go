package integration

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/logcall"
	"github.com/toolgate/toolgate/store/decisionlog"
	"github.com/toolgate/toolgate/store/pg"
)

// decisionSink is what the SQLite and the PostgreSQL decision logs share.
type decisionSink interface {
	Enqueue(decisionlog.Entry) bool
	Flush(context.Context) error
	Dropped() uint64
	Failed() uint64
	Close() error
}

// BenchmarkReplicasDecisionLog writes b.N entries into the decision log,
// SQLite (the embedded default) and PostgreSQL (--database-url), through
// each log's own queue and writer as the server does; it reports
// entries/s from the first Enqueue until all are written.
func BenchmarkReplicasDecisionLog(b *testing.B) {
	call := logcall.Of(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "git push --force origin main"}), ChannelID: "web"}, nil)
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			sink := openSink(b, kind)
			defer sink.Close()
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e := decisionlog.Entry{Time: time.Now(), Source: "evaluate", Agent: "rest", Call: call, Level: "deny", MatchedRule: "builtin:git-force-push"}
				for !sink.Enqueue(e) {
					// The queue is full: wait for the writer rather than count
					// a drop, so every entry is written.
					if err := sink.Flush(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := sink.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if sink.Failed() != 0 {
				b.Fatalf("%d entries failed", sink.Failed())
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

func openSink(b *testing.B, kind string) decisionSink {
	b.Helper()
	if kind == "sqlite" {
		l, err := decisionlog.Open(filepath.Join(b.TempDir(), "decisions.db"), decisionlog.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return l
	}
	ctx := context.Background()
	db, err := pg.Open(ctx, pgtest.Shared(b).NewDatabase(b), pg.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	l, err := decisionlog.OpenPG(ctx, db, decisionlog.PGOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkReplicasEditFanout measures, per op, the time from an edit sent
// to one replica (a rule's action flipped between allow and deny, through
// each replica in turn) until every one of three replicas decides with
// it, polling each every 2 ms. Besides the mean (ns/op) it reports the
// median and the slowest op, and how long the edit itself took to be
// acknowledged (ack-ms), so the fan-out after the acknowledgement is the
// difference.
func BenchmarkReplicasEditFanout(b *testing.B) {
	rs := benchReplicas(b)
	st, body, err := addRule(rs[0], "fanout", "make *")
	if err != nil || st != 201 {
		b.Fatalf("add rule: %d %s %v", st, body, err)
	}
	var all, acks []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		want := []string{"deny", "allow"}[i%2]
		start := time.Now()
		st, body, err := relDo(rs[i%3], rs[0].Token, "PATCH", "/api/v1/permissions/rules/fanout", map[string]any{"action": want})
		if err != nil || st != 200 {
			b.Fatalf("patch rule: %d %s %v", st, body, err)
		}
		acks = append(acks, time.Since(start))
		for j, s := range rs {
			deadline := time.Now().Add(10 * time.Second)
			for relLevel(b, s, "bash", makeAll) != want {
				if time.Now().After(deadline) {
					b.Fatalf("replica %d does not decide %s 10 s after the edit", j, want)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
		all = append(all, time.Since(start))
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	slices.Sort(all)
	slices.Sort(acks)
	b.ReportMetric(ms(all[len(all)/2]), "p50-ms")
	b.ReportMetric(ms(all[len(all)-1]), "max-ms")
	b.ReportMetric(ms(acks[len(acks)/2]), "ack-p50-ms")
}

// benchReplicas starts three replicas on a fresh database as startReplicas
// does (benchmarks have no *testing.T).
func benchReplicas(b *testing.B) []*Server {
	b.Helper()
	dsn := pgtest.Shared(b).NewDatabase(b)
	var rs []*Server
	for i := range 3 {
		o := ServerOptions{ConfigDir: b.TempDir(), Args: []string{"--database-url", dsn}}
		if i == 0 {
			o.ConfigYAML = replicaConfig
		} else {
			writeFile(b, filepath.Join(o.ConfigDir, "api_token"), rs[0].Token+"\n")
		}
		rs = append(rs, StartServer(b, o))
	}
	return rs
}
