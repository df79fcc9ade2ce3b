package decisionlog

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store/sqlite"
)

// openDecisionTestDB opens a fresh SQLite file like the server does.
func openDecisionTestDB(t testing.TB) (*sqlite.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "decisions.db")
	db, err := sqlite.Open(path, migrations)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// fakeClock is a settable clock.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func newTestLog(t *testing.T, opts Options) (*Log, *sql.DB, string) {
	t.Helper()
	db, path := openDecisionTestDB(t)
	l := newLog(db, opts)
	t.Cleanup(func() { l.Close() })
	return l, db.SQL(), path
}

func flush(t *testing.T, l *Log) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func countRows(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM decisions`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDecisionLogRecordsAndQueries(t *testing.T) {
	clock := &fakeClock{now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	l, _, _ := newTestLog(t, Options{Now: clock.Now})
	base := clock.now
	entries := []Entry{
		{Time: base, Source: "evaluate", Tool: "bash", Summary: "git push", Level: "ask", MatchedRule: "tiered_policy:rules:rules[git_push]", Session: "s1", Channel: "web", LatencyMicros: 12},
		{Time: base.Add(time.Minute), Source: "check", Tool: "bash", Summary: "ls", Level: "allow", MatchedRule: "tools.bash", Session: "s2"},
		{Time: base.Add(2 * time.Minute), Source: "evaluate", Tool: "read_file", Summary: "path=a", Level: "deny", MatchedRule: "tools.read_file",
			Request: &Request{ToolName: "read_file", ToolArgs: map[string]any{"path": "a"}}},
	}
	for _, e := range entries {
		if !l.Enqueue(e) {
			t.Fatal("enqueue dropped an entry with an empty queue")
		}
	}
	flush(t, l)
	ctx := context.Background()
	cases := []struct {
		note    string
		q       Query
		wantIDs []int64
	}{
		{"all, newest first", Query{}, []int64{3, 2, 1}},
		{"by tool", Query{Tool: "bash"}, []int64{2, 1}},
		{"by level", Query{Level: "deny"}, []int64{3}},
		{"by rule substring", Query{Rule: "git_push"}, []int64{1}},
		{"by session", Query{Session: "s2"}, []int64{2}},
		{"since is inclusive", Query{Since: base.Add(time.Minute)}, []int64{3, 2}},
		{"until is exclusive", Query{Until: base.Add(time.Minute)}, []int64{1}},
		{"limit", Query{Limit: 2}, []int64{3, 2}},
		{"cursor", Query{Before: 2}, []int64{1}},
		{"offset", Query{Offset: 1}, []int64{2, 1}},
	}
	for _, c := range cases {
		page, err := l.Query(ctx, c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.note, err)
		}
		var got []int64
		for _, e := range page.Entries {
			got = append(got, e.ID)
		}
		if len(got) != len(c.wantIDs) {
			t.Errorf("%s: got ids %v, want %v", c.note, got, c.wantIDs)
			continue
		}
		for i := range got {
			if got[i] != c.wantIDs[i] {
				t.Errorf("%s: got ids %v, want %v", c.note, got, c.wantIDs)
				break
			}
		}
	}
	page, _ := l.Query(ctx, Query{Limit: 2})
	if page.NextBefore != 2 {
		t.Errorf("next cursor: got %d, want 2", page.NextBefore)
	}
	first, _ := l.Query(ctx, Query{Tool: "bash", Rule: "git_push"})
	e := first.Entries[0]
	want := entries[0]
	if e.Source != want.Source || e.Summary != want.Summary || e.Level != want.Level || e.MatchedRule != want.MatchedRule ||
		e.Session != want.Session || e.Channel != want.Channel || e.LatencyMicros != want.LatencyMicros || !e.Time.Equal(want.Time) {
		t.Errorf("stored entry: got %+v, want %+v", e, want)
	}
	recent, err := l.Recent(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recent) != 1 || recent[0].Request == nil || recent[0].Request.ToolArgs["path"] != "a" {
		t.Errorf("recent with requests: got %+v, want the one read_file entry with its args", recent)
	}
	series, err := l.LevelSeries(ctx, Query{Since: base, Until: base.Add(3 * time.Minute)}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if series[0].Counts["ask"] != 1 || series[1].Counts["allow"] != 1 || series[2].Counts["deny"] != 1 {
		t.Errorf("series: got %+v, want one ask, one allow, one deny in buckets 0, 1, 2", series)
	}
}

func TestDecisionLogRetention(t *testing.T) {
	clock := &fakeClock{now: time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC)}
	t.Run("by age", func(t *testing.T) {
		l, db, _ := newTestLog(t, Options{Now: clock.Now, Retention: 24 * time.Hour})
		for _, age := range []time.Duration{72 * time.Hour, 25 * time.Hour, 23 * time.Hour, time.Minute} {
			l.Enqueue(Entry{Time: clock.now.Add(-age), Tool: "bash", Level: "ask"})
		}
		flush(t, l)
		n, err := l.Prune(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 || countRows(t, db) != 2 {
			t.Errorf("pruned %d, kept %d; want 2 pruned (older than 24h), 2 kept", n, countRows(t, db))
		}
	})
	t.Run("by count", func(t *testing.T) {
		l, db, _ := newTestLog(t, Options{Now: clock.Now, MaxRows: 3})
		for i := range 5 {
			l.Enqueue(Entry{Time: clock.now, Tool: "bash", Summary: string(rune('a' + i)), Level: "ask"})
		}
		flush(t, l)
		if _, err := l.Prune(context.Background()); err != nil {
			t.Fatal(err)
		}
		page, _ := l.Query(context.Background(), Query{})
		if countRows(t, db) != 3 || page.Entries[2].Summary != "c" {
			t.Errorf("kept %d rows (oldest %q); want the newest 3 (c, d, e)", countRows(t, db), page.Entries[len(page.Entries)-1].Summary)
		}
	})
	t.Run("periodically", func(t *testing.T) {
		l, db, _ := newTestLog(t, Options{Now: clock.Now, MaxRows: 1, PruneEvery: 10 * time.Millisecond})
		l.Enqueue(Entry{Tool: "a", Level: "ask"})
		l.Enqueue(Entry{Tool: "b", Level: "ask"})
		flush(t, l)
		deadline := time.Now().Add(10 * time.Second)
		for countRows(t, db) != 1 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := countRows(t, db); got != 1 {
			t.Errorf("after periodic pruning: %d rows, want 1", got)
		}
	})
}

// TestDecisionLogPreparesOnTheWriter: the writer, not Enqueue, has the
// entry's Call fill the derived fields, once, and then drops the call
// (logcall's TestLogRedactsCalls checks what the engine's call fills).
func TestDecisionLogPreparesOnTheWriter(t *testing.T) {
	l, _, _ := newTestLog(t, Options{})
	call := &countingCall{}
	l.Enqueue(Entry{Tool: "bash", Level: "ask", Call: call, FullArgs: true})
	if call.n.Load() != 0 {
		t.Errorf("Enqueue prepared the entry on the request path")
	}
	flush(t, l)
	page, err := l.Query(context.Background(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entries) != 1 || page.Entries[0].Summary != "prepared" || call.n.Load() != 1 {
		t.Errorf("got %+v after %d prepares, want one entry prepared once", page.Entries, call.n.Load())
	}
	recent, _ := l.Recent(context.Background(), 10)
	if len(recent) != 1 || recent[0].Request == nil || recent[0].Request.ToolArgs["command"] != "kept" {
		t.Errorf("full args: got %+v, want the request the call filled", recent)
	}
}

// countingCall is a Call that counts its prepares.
type countingCall struct{ n atomic.Int32 }

func (c *countingCall) Prepare(e *Entry) {
	c.n.Add(1)
	e.Summary = "prepared"
	e.Request = &Request{ToolName: "bash", ToolArgs: map[string]any{"command": "kept"}}
}

func TestDecisionLogNeverBlocks(t *testing.T) {
	const queue, batch, total = 4, 2, 200
	l, db, path := newTestLog(t, Options{QueueSize: queue, BatchSize: batch})
	locker, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	conn, err := locker.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	accepted := 0
	for range total {
		if l.Enqueue(Entry{Tool: "bash", Level: "allow"}) {
			accepted++
		}
	}
	if got := int(l.Dropped()); got != total-accepted || got < total-queue-batch {
		t.Errorf("dropped %d of %d with the writer stalled; want %d (at least %d)", got, total, total-accepted, total-queue-batch)
	}
	if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	flush(t, l)
	if got := countRows(t, db); got != accepted {
		t.Errorf("rows after the stall: got %d, want the %d accepted", got, accepted)
	}
}

// TestDecisionLogLingerEndsWhenBatchFills checks that a lingering
// writer does not sleep out its Linger once its batch is full:
// with an hour's linger, entries must still be written at once.
func TestDecisionLogLingerEndsWhenBatchFills(t *testing.T) {
	const batch = 8
	l, db, _ := newTestLog(t, Options{BatchSize: batch, Linger: time.Hour})
	l.Enqueue(Entry{Tool: "bash", Level: "allow"})
	time.Sleep(50 * time.Millisecond) // the writer has the first entry and lingers
	for range 2 * batch {
		l.Enqueue(Entry{Tool: "bash", Level: "allow"})
	}
	deadline := time.Now().Add(10 * time.Second)
	for l.Written() < batch && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := l.Written(); got < batch {
		t.Fatalf("written %d entries with %d queued and an hour's linger; want at least %d", got, 2*batch+1, batch)
	}
	if got := countRows(t, db); got < batch {
		t.Errorf("rows: got %d, want at least %d", got, batch)
	}
}

// TestSessionQueryUsesPartialIndex: the session index holds only rows with
// a session, and a query by session still finds them through it (the
// query plan names the index) and finds only them.
func TestSessionQueryUsesPartialIndex(t *testing.T) {
	db, _ := openDecisionTestDB(t)
	l := newLog(db, Options{})
	defer l.Close()
	call := &redactingCall{tool: "bash", args: map[string]any{"command": "ls"}}
	batch := []Entry{{Source: "evaluate", Call: call, Level: "allow"}, {Source: "hook", Call: call, Level: "allow", Session: "s1"},
		{Source: "hook", Call: call, Level: "ask", Session: "s2"}}
	if err := l.insert(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	q := Query{Session: "s1"}
	where, args := q.where()
	plan := queryPlan(t, db.SQL(), `SELECT id FROM decisions`+where+` ORDER BY id DESC`, args...)
	if !strings.Contains(plan, "decisions_session") {
		t.Errorf("query plan %q does not use decisions_session", plan)
	}
	page, err := l.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entries) != 1 || page.Entries[0].Session != "s1" {
		t.Errorf("by session s1: got %+v, want the one row", page.Entries)
	}
	var indexed int
	if err := db.SQL().QueryRow(`SELECT count(*) FROM decisions INDEXED BY decisions_session WHERE session <> ''`).Scan(&indexed); err != nil || indexed != 2 {
		t.Errorf("rows in the session index: got %d (%v), want the 2 with a session", indexed, err)
	}
}
