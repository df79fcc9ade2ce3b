package decisionlog

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// TestInsertChunksKeepEveryRowInOrder writes batches whose sizes cross the
// INSERT statements' chunk sizes and checks that every entry is stored
// once, in the batch's order (ids follow it), with its values, and that an
// empty optional text is stored as the empty string (not NULL), as before the leaner
// binding. Entries with the optional texts and a request come every few
// entries, in some chunks only, or never, so that chunks are written by the
// full statements, the lean ones (leanRow) and both in one batch.
func TestInsertChunksKeepEveryRowInOrder(t *testing.T) {
	for _, c := range []struct {
		note  string
		n     int
		every int
	}{
		{note: "one entry", n: 1, every: 3},
		{note: "one lean entry", n: 1},
		{note: "one short of a full statement", n: insertRows - 1, every: 3},
		{note: "exactly one full statement", n: insertRows, every: 3},
		{note: "full statements and every chunk of the rest", n: 3*insertRows + insertRows - 1, every: 3},
		{note: "the default batch size", n: 512, every: 3},
		{note: "lean and full chunks in one batch", n: 3*insertRows + insertRows - 1, every: 200},
		{note: "lean chunks only", n: 3*insertRows + insertRows - 1},
	} {
		t.Run(c.note, func(t *testing.T) {
			db, _ := openDecisionTestDB(t)
			l := newLog(db, Options{})
			defer l.Close()
			batch := make([]Entry, c.n)
			base := time.Unix(1_800_000_000, 0)
			for i := range batch {
				batch[i] = Entry{Time: base.Add(time.Duration(i) * time.Microsecond), Source: "evaluate",
					Tool: fmt.Sprintf("tool%d", i), Summary: fmt.Sprintf("call %d", i), Level: "allow", LatencyMicros: int64(i)}
				if c.every > 0 && i%c.every == 0 {
					batch[i].Channel, batch[i].Session, batch[i].MatchedRule = "ch", fmt.Sprintf("s%d", i), "tools.bash"
					batch[i].ShadowLevel, batch[i].ShadowRule, batch[i].Agent = "deny", "shadow:1", "claude"
					batch[i].Request = &Request{ToolName: "bash", ToolArgs: map[string]any{"command": fmt.Sprintf("ls %d", i)}}
				} else if i%2 == 0 {
					batch[i].MatchedRule = "tools.bash"
				}
			}
			if err := l.insert(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
			rows, err := db.SQL().Query(`SELECT ts, tool, summary, channel, session, matched_rule, latency_us,
				shadow_level, shadow_rule, agent, request FROM decisions ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			i := 0
			for rows.Next() {
				var ts, lat int64
				var tool, summary, channel, session, rule, shadowLevel, shadowRule, agent string
				var request sql.NullString
				if err := rows.Scan(&ts, &tool, &summary, &channel, &session, &rule, &lat, &shadowLevel, &shadowRule, &agent, &request); err != nil {
					t.Fatalf("row %d: %v (a NULL where '' was meant?)", i, err)
				}
				want := batch[i]
				if want.Agent == "" {
					want.Agent = "rest"
				}
				got := Entry{Time: time.UnixMicro(ts), Tool: tool, Summary: summary, Channel: channel, Session: session,
					MatchedRule: rule, LatencyMicros: lat, ShadowLevel: shadowLevel, ShadowRule: shadowRule, Agent: agent}
				if !got.Time.Equal(want.Time) || got.Tool != want.Tool || got.Summary != want.Summary || got.Channel != want.Channel ||
					got.Session != want.Session || got.MatchedRule != want.MatchedRule || got.LatencyMicros != want.LatencyMicros ||
					got.ShadowLevel != want.ShadowLevel || got.ShadowRule != want.ShadowRule || got.Agent != want.Agent {
					t.Fatalf("row %d: got %+v, want %+v", i, got, want)
				}
				if wantReq := want.Request != nil; request.Valid != wantReq ||
					(wantReq && request.String != fmt.Sprintf(`{"tool_name":"bash","tool_args":{"command":"ls %d"}}`, i)) {
					t.Fatalf("row %d: request %+v, want one: %v", i, request, wantReq)
				}
				i++
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if i != c.n {
				t.Fatalf("%d rows stored, want %d", i, c.n)
			}
			var nulls int
			if err := db.SQL().QueryRow(`SELECT count(*) FROM decisions WHERE channel IS NULL OR session IS NULL
				OR matched_rule IS NULL OR shadow_level IS NULL OR shadow_rule IS NULL`).Scan(&nulls); err != nil || nulls != 0 {
				t.Fatalf("%d rows with a NULL optional text (%v), want 0", nulls, err)
			}
		})
	}
}

// TestInsertChunk checks the chunking of a batch: the largest prepared
// statement that fits what is left.
func TestInsertChunk(t *testing.T) {
	for _, c := range []struct {
		note          string
		left          int
		size, entries int
	}{
		{note: "more than a full statement", left: 1000, size: 0, entries: insertRows},
		{note: "a full statement", left: insertRows, size: 0, entries: insertRows},
		{note: "one short", left: insertRows - 1, size: 1, entries: insertRows / 2},
		{note: "three", left: 3, size: 6, entries: 2},
		{note: "one", left: 1, size: 7, entries: 1},
	} {
		size, n := insertChunk(c.left)
		if size != c.size || n != c.entries || size >= insertSizes {
			t.Errorf("%s: insertChunk(%d) = %d, %d; want %d, %d", c.note, c.left, size, n, c.size, c.entries)
		}
	}
}

// TestSQLiteLogBatchDefaults: the SQLite log waits for larger batches than
// the shared defaults unless told otherwise, and keeps what it is told.
func TestSQLiteLogBatchDefaults(t *testing.T) {
	for _, c := range []struct {
		note   string
		opts   Options
		batch  int
		linger time.Duration
	}{
		{note: "defaults", batch: sqliteBatchSize, linger: sqliteLinger},
		{note: "set", opts: Options{BatchSize: 3, Linger: -1}, batch: 3, linger: -1},
	} {
		db, _ := openDecisionTestDB(t)
		l := newLog(db, c.opts)
		if l.opts.BatchSize != c.batch || l.opts.Linger != c.linger || l.Writer.opts.BatchSize != c.batch || l.Writer.opts.Linger != c.linger {
			t.Errorf("%s: batch %d, linger %v; want %d, %v", c.note, l.Writer.opts.BatchSize, l.Writer.opts.Linger, c.batch, c.linger)
		}
		l.Close()
	}
}
