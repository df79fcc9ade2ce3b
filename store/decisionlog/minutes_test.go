package decisionlog

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store/sqlite"
)

// minutesBase is a whole minute: the entries of the tests below start at it.
var minutesBase = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// minutesEntries are n entries 7 seconds apart, in batches of 50, every
// 40th logged late (dated 9 minutes before its neighbours, as a check that
// waited for an answer is), so that minutes and ids are not in one order.
func minutesEntries(n int) [][]Entry {
	var batches [][]Entry
	for i := 0; i < n; i++ {
		at := minutesBase.Add(time.Duration(i) * 7 * time.Second)
		if i%40 == 39 {
			at = at.Add(-9 * time.Minute)
		}
		if i%50 == 0 {
			batches = append(batches, nil)
		}
		e := Entry{Time: at, Source: "evaluate", Tool: []string{"bash", "read_file"}[i%2], Summary: fmt.Sprint(i),
			Level: []string{"allow", "ask", "deny"}[i%3], MatchedRule: "tools.bash"}
		batches[len(batches)-1] = append(batches[len(batches)-1], e)
	}
	return batches
}

// idsByScan are the ids (1, 2, ... in order of batches) of the entries of q's
// tool and time range, newest first, found by reading every entry.
func idsByScan(batches [][]Entry, q Query, gone func(id int64) bool) []int64 {
	var ids []int64
	id := int64(0)
	for _, b := range batches {
		for _, e := range b {
			id++
			if gone(id) || (q.Tool != "" && e.Tool != q.Tool) || (!q.Since.IsZero() && e.Time.Before(q.Since)) ||
				(!q.Until.IsZero() && !e.Time.Before(q.Until)) {
				continue
			}
			ids = append(ids, id)
		}
	}
	slices.Reverse(ids)
	return ids
}

// queryIDs pages through q and returns the ids, newest first.
func queryIDs(t *testing.T, l *Log, q Query) []int64 {
	t.Helper()
	var ids []int64
	q.Limit = 37
	for {
		page, err := l.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entries {
			ids = append(ids, e.ID)
		}
		if page.NextBefore == 0 {
			return ids
		}
		q.Before = page.NextBefore
	}
}

// TestTimeRangesFindWhatAScanFinds: time ranges, found through the minutes
// table (decisionMinutesSchema), give the entries that reading every entry
// gives, late ones included, at minute edges and a microsecond off them;
// also after pruning by age and by count. A minute that did not cover one
// of its ids loses entries here.
func TestTimeRangesFindWhatAScanFinds(t *testing.T) {
	clock := &fakeClock{now: minutesBase.Add(time.Hour)}
	db, _ := openDecisionTestDB(t)
	l := newLog(db, Options{Now: clock.Now, Retention: time.Hour, MaxRows: 1_000_000})
	defer l.Close()
	batches := minutesEntries(600)
	for _, b := range batches {
		if err := l.insert(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	var edges []time.Time
	for m := -10; m <= 75; m += 3 {
		at := minutesBase.Add(time.Duration(m) * time.Minute)
		edges = append(edges, at, at.Add(time.Microsecond), at.Add(-time.Microsecond), at.Add(29*time.Second))
	}
	check := func(note string, gone func(int64) bool) {
		t.Helper()
		for i, since := range edges {
			for _, until := range []time.Time{{}, edges[(i+5)%len(edges)], edges[(i+41)%len(edges)]} {
				for _, q := range []Query{{Since: since, Until: until}, {Until: since}, {Since: since, Until: until, Tool: "bash"}} {
					got, want := queryIDs(t, l, q), idsByScan(batches, q, gone)
					if !slices.Equal(got, want) {
						t.Fatalf("%s: %v to %v, tool %q: ids %v, want %v", note, q.Since, q.Until, q.Tool, got, want)
					}
				}
			}
		}
	}
	check("all kept", func(int64) bool { return false })

	// The retention keeps the last hour: entries before minutesBase+20m go.
	clock.now = minutesBase.Add(80 * time.Minute)
	if _, err := l.Prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	cutoff := minutesBase.Add(20 * time.Minute)
	var ts []time.Time
	for _, b := range batches {
		for _, e := range b {
			ts = append(ts, e.Time)
		}
	}
	byAge := func(id int64) bool { return ts[id-1].Before(cutoff) }
	if got, want := countRows(t, db.SQL()), len(idsByScan(batches, Query{}, byAge)); got != want {
		t.Fatalf("after pruning by age: %d rows, want %d", got, want)
	}
	check("pruned by age", byAge)
	var minutes int
	if err := db.SQL().QueryRow(`SELECT count(*) FROM decisions_minutes WHERE minute < ?`,
		cutoff.UnixMicro()/minuteMicros).Scan(&minutes); err != nil || minutes != 0 {
		t.Errorf("minutes before the cutoff left: %d (%v), want none", minutes, err)
	}

	l.opts.MaxRows = 100
	if _, err := l.Prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	byCount := func(id int64) bool { return id <= 500 || byAge(id) }
	if got := countRows(t, db.SQL()); got != 100 {
		t.Fatalf("after pruning by count: %d rows, want 100", got)
	}
	check("pruned by count", byCount)
	if err := db.SQL().QueryRow(`SELECT count(*) FROM decisions_minutes WHERE last_id <= 500`).Scan(&minutes); err != nil || minutes != 0 {
		t.Errorf("minutes of pruned ids left: %d (%v), want none", minutes, err)
	}
}

// TestTimeRangesUseIDs: every query shape with a time range, the level
// series' and the prune's, reads the entries through the rowid or an
// index, never a scan of the table (the time index is gone).
func TestTimeRangesUseIDs(t *testing.T) {
	db, _ := openDecisionTestDB(t)
	now := time.Now()
	for _, q := range []Query{{Since: now}, {Until: now}, {Since: now.Add(-time.Hour), Until: now}, {Tool: "bash", Since: now},
		{Agent: "rest", Until: now}, {Session: "s", Since: now}, {Level: "allow", Since: now}, {Before: 10, Since: now},
		{Rule: "x", Since: now}, {Server: "fs", Until: now}, {Shadowed: true, Since: now, Until: now}} {
		where, args := q.where()
		for _, query := range []string{`SELECT id FROM decisions` + where + ` ORDER BY id DESC LIMIT 51 OFFSET 0`,
			`SELECT (ts - 1) / 2, level, count(*) FROM decisions` + where + ` GROUP BY 1, 2`} {
			if plan := queryPlan(t, db.SQL(), query, args...); strings.Contains(plan, "SCAN decisions") && !strings.Contains(plan, "SCAN decisions_minutes") {
				t.Errorf("%+v: plan %q scans the table", q.Conds(), plan)
			}
		}
	}
	if plan := queryPlan(t, db.SQL(), `DELETE FROM decisions WHERE ts < ?1 AND id <= (
		SELECT max(last_id) FROM decisions_minutes WHERE minute <= ?2)`, 1, 2); !strings.Contains(plan, "SEARCH decisions USING INTEGER PRIMARY KEY") {
		t.Errorf("prune by age: plan %q does not read a range of ids", plan)
	}
}

// queryPlan is EXPLAIN QUERY PLAN's details of query, joined by "; ".
func queryPlan(t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.Query(`EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}

// TestMinutesMigration opens a decision log written with the time index
// (migration 5): its minutes are made from its rows, late ones included,
// the index is gone, and time ranges find the old rows and new ones.
func TestMinutesMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.db")
	var before []sqlite.Migration
	for _, m := range migrations {
		if m.Version < 6 {
			before = append(before, m)
		}
	}
	old, err := sqlite.Open(path, before)
	if err != nil {
		t.Fatal(err)
	}
	batches := minutesEntries(200)
	for _, b := range batches {
		for _, e := range b {
			if _, err := old.SQL().Exec(`INSERT INTO decisions (ts, source, tool, summary, level) VALUES (?, ?, ?, ?, ?)`,
				e.Time.UnixMicro(), e.Source, e.Tool, e.Summary, e.Level); err != nil {
				t.Fatal(err)
			}
		}
	}
	old.Close()
	db, err := sqlite.Open(path, migrations)
	if err != nil {
		t.Fatalf("reopen with every migration: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	var indexes int
	if err := db.SQL().QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'decisions_ts'`).Scan(&indexes); err != nil || indexes != 0 {
		t.Errorf("decisions_ts after migration 6: %d (%v), want gone", indexes, err)
	}
	l := newLog(db, Options{})
	t.Cleanup(func() { l.Close() })
	more := minutesEntries(260)[4:] // 60 more, in the same minutes as the old rows' last ones
	if err := l.insert(context.Background(), slices.Concat(more...)); err != nil {
		t.Fatal(err)
	}
	all := append(batches, more...)
	for m := -10; m <= 35; m += 2 {
		since := minutesBase.Add(time.Duration(m)*time.Minute + 13*time.Second)
		q := Query{Since: since, Until: since.Add(4 * time.Minute)}
		if got, want := queryIDs(t, l, q), idsByScan(all, q, func(int64) bool { return false }); !slices.Equal(got, want) {
			t.Fatalf("%v to %v: ids %v, want %v", q.Since, q.Until, got, want)
		}
	}
}

// TestMinutesOfAnOlderVersionsEntries: a toolgate from before migration 6
// that opens the file after this one migrated it writes entries without
// their minutes; Open marks them, so that every time range still finds
// what a scan finds.
func TestMinutesOfAnOlderVersionsEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.db")
	batches := minutesEntries(200)
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.insert(context.Background(), slices.Concat(batches[:2]...)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	older, err := sqlite.Open(path, nil) // its migrations are all recorded
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range slices.Concat(batches[2:]...) { // as its writer does: no minute
		if _, err := older.SQL().Exec(`INSERT INTO decisions (ts, source, tool, summary, level) VALUES (?, ?, ?, ?, ?)`,
			e.Time.UnixMicro(), e.Source, e.Tool, e.Summary, e.Level); err != nil {
			t.Fatal(err)
		}
	}
	older.Close()
	l, err = Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	for m := -10; m <= 35; m += 3 {
		since := minutesBase.Add(time.Duration(m)*time.Minute + 13*time.Second)
		q := Query{Since: since, Until: since.Add(4 * time.Minute)}
		want := idsByScan(batches, q, func(int64) bool { return false })
		if got := queryIDs(t, l, q); !slices.Equal(got, want) {
			t.Errorf("minutes %d..%d: got %d entries %v, want %d %v", m, m+4, len(got), got, len(want), want)
		}
	}
}
