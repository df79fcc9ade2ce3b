package decisionlog_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/logcall"
	"github.com/toolgate/toolgate/store/decisionlog"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

// decisionLogAPI is the method set the SQLite and the PostgreSQL decision
// logs share; the service layer depends on it.
type decisionLogAPI interface {
	Enqueue(e decisionlog.Entry) bool
	Flush(ctx context.Context) error
	Close() error
	Query(ctx context.Context, q decisionlog.Query) (decisionlog.Page, error)
	Recent(ctx context.Context, n int) ([]decisionlog.Entry, error)
	LevelSeries(ctx context.Context, q decisionlog.Query, n int) ([]decisionlog.LevelBucket, error)
	Prune(ctx context.Context) (int64, error)
	Dropped() uint64
	Failed() uint64
	Written() uint64
	QueueLen() int
}

var (
	_ decisionLogAPI = (*decisionlog.Log)(nil)
	_ decisionLogAPI = (*decisionlog.PGLog)(nil)
)

// openBothDecisionLogs opens a SQLite log on a temp file and a PostgreSQL
// log on a fresh database, with the same options.
func openBothDecisionLogs(t *testing.T, opts decisionlog.Options) (sqliteLog, pgLog decisionLogAPI) {
	t.Helper()
	sl, err := decisionlog.Open(filepath.Join(t.TempDir(), "decisions.db"), opts)
	if err != nil {
		t.Fatalf("sqlite decision log: %v", err)
	}
	t.Cleanup(func() { sl.Close() })
	pl, err := decisionlog.OpenPG(context.Background(), dbtest.Open(t, pgtest.NewDSN(t)), decisionlog.PGOptions{Options: opts})
	if err != nil {
		t.Fatalf("pg decision log: %v", err)
	}
	t.Cleanup(func() { pl.Close() })
	return sl, pl
}

// conformanceEntries are the entries both logs get, in order: ids 1..n.
// They vary every filtered column, repeat timestamps, and carry rule text
// with LIKE wildcards, case differences and multi-byte letters.
func conformanceEntries(base time.Time) []decisionlog.Entry {
	tools := []string{"bash", "read_file", "write_file", "mcp__github__create_issue"}
	levels := []string{"allow", "ask", "deny"}
	rules := []string{"tiered_policy:rules:rules[git_push]", "tools.bash", "Tools.Bash", "builtin:rm-rf",
		"100%_sure", "", "règle:é"}
	sessions := []string{"s1", "s2", "", "sé"}
	agents := []string{"", "codex", "claude-code", "rest", "gemini"}
	secret := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "mysql -pSECRET db"}), ChannelID: "web", Explain: true}
	var out []decisionlog.Entry
	at := base
	for i := range 60 {
		if i%5 != 0 { // every fifth entry shares the previous one's time
			at = at.Add(37*time.Second + 123*time.Microsecond)
		}
		e := decisionlog.Entry{
			Time: at, Source: []string{"evaluate", "check"}[i%2], Agent: agents[i%len(agents)],
			Tool: tools[i%len(tools)], Summary: fmt.Sprintf("call %d", i), Channel: []string{"web", "cli"}[i%2],
			Session: sessions[i%len(sessions)], Level: levels[(i/2)%len(levels)], MatchedRule: rules[i%len(rules)],
			LatencyMicros: int64(i * 11),
		}
		if i%8 == 7 { // every other MCP entry: another server, whose name begins the first's
			e.Tool = "mcp__git__hub__x"
		}
		switch i % 9 {
		case 3: // a full request given as is
			e.Request = &decisionlog.Request{ToolName: e.Tool, ToolArgs: map[string]any{"path": fmt.Sprintf("/p/%d", i), "n": float64(i)}}
		case 5: // the raw call, redacted by the writer, with full args
			e.Summary, e.Call, e.FullArgs = "", logcall.Of(secret, nil), true
		case 7: // the raw call, summary only
			e.Summary, e.Call = "", logcall.Of(secret, nil)
		}
		switch i % 11 {
		case 2: // decided by a policy with a shadow rule that would deny it
			e.Level, e.Summary, e.Call = "ask", "", shadowedPush
		case 6: // a shadow outcome given as is, with a multi-byte rule id
			e.ShadowLevel, e.ShadowRule = "allow", "tiered_policy:rules:rules[essai_é]"
		}
		out = append(out, e)
	}
	return out
}

// shadowPolicy is a policy whose shadow rule would deny git push.
func shadowPolicy() *engine.Engine {
	e, _ := engine.Compile(map[string]any{"schema": "tiered_policy", "tools": map[string]any{"bash": "ask"},
		"rules": []any{map[string]any{"id": "no_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "deny", "mode": "shadow"}}},
		nil, engine.Options{})
	return e
}

// shadowedPush is git push decided by shadowPolicy.
var shadowedPush = logcall.Of(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "git push origin main"})}, shadowPolicy())

// shadowOf is what an entry's shadow outcome must be once written.
func shadowOf(e decisionlog.Entry) (level, rule string) {
	if e.Call == shadowedPush {
		return "deny", "tiered_policy:rules:deny:rules[no_push]"
	}
	return e.ShadowLevel, e.ShadowRule
}

// conformanceQueries are the queries both logs must answer alike.
func conformanceQueries(base time.Time) []struct {
	note string
	q    decisionlog.Query
} {
	mid := base.Add(12 * time.Minute)
	return []struct {
		note string
		q    decisionlog.Query
	}{
		{"everything, default page", decisionlog.Query{}},
		{"everything, largest page", decisionlog.Query{Limit: decisionlog.MaxPage}},
		{"limit above the maximum", decisionlog.Query{Limit: 10_000}},
		{"negative limit takes the default", decisionlog.Query{Limit: -3}},
		{"by tool", decisionlog.Query{Tool: "bash"}},
		{"by a tool with no entries", decisionlog.Query{Tool: "glob"}},
		{"by MCP server", decisionlog.Query{Server: "git"}},
		{"by another MCP server", decisionlog.Query{Server: "github"}},
		{"an MCP server is not a prefix of a longer one", decisionlog.Query{Server: "gi"}},
		{"an MCP server with a LIKE wildcard", decisionlog.Query{Server: "g%"}},
		{"every MCP tool", decisionlog.Query{ToolPrefix: "mcp__"}},
		{"a tool prefix with a LIKE wildcard", decisionlog.Query{ToolPrefix: "mcp_%"}},
		{"by level", decisionlog.Query{Level: "deny"}},
		{"rule substring", decisionlog.Query{Rule: "git_push"}},
		{"rule substring is case-sensitive", decisionlog.Query{Rule: "tools.bash"}},
		{"rule % is a literal, not a wildcard", decisionlog.Query{Rule: "%"}},
		{"rule _ is a literal, not a wildcard", decisionlog.Query{Rule: "_"}},
		{"rule multi-byte", decisionlog.Query{Rule: "é"}},
		{"by session", decisionlog.Query{Session: "s1"}},
		{"by multi-byte session", decisionlog.Query{Session: "sé"}},
		{"agent rest includes entries without one", decisionlog.Query{Agent: "rest"}},
		{"by agent", decisionlog.Query{Agent: "codex"}},
		{"since is inclusive", decisionlog.Query{Since: base.Add(5*37*time.Second + 5*123*time.Microsecond)}},
		{"until is exclusive", decisionlog.Query{Until: base.Add(4*37*time.Second + 4*123*time.Microsecond)}},
		{"since equals until", decisionlog.Query{Since: mid, Until: mid}},
		{"since after everything", decisionlog.Query{Since: base.Add(24 * time.Hour)}},
		{"window", decisionlog.Query{Since: base.Add(3 * time.Minute), Until: mid}},
		{"cursor", decisionlog.Query{Before: 10}},
		{"cursor past the start", decisionlog.Query{Before: 1}},
		{"cursor with filters", decisionlog.Query{Before: 40, Tool: "bash", Level: "ask", Limit: 3}},
		{"offset", decisionlog.Query{Offset: 5, Limit: 7}},
		{"negative offset", decisionlog.Query{Offset: -5, Limit: 7}},
		{"offset past the end", decisionlog.Query{Offset: 100}},
		{"a NUL in a filter", decisionlog.Query{Rule: "\x00"}},
		{"calls a shadow rule would change", decisionlog.Query{Shadowed: true}},
		{"by shadow rule", decisionlog.Query{Shadowed: true, ShadowRule: "no_push"}},
		{"by a multi-byte shadow rule", decisionlog.Query{Shadowed: true, ShadowRule: "essai_é"}},
		{"a shadow rule id is not a prefix", decisionlog.Query{Shadowed: true, ShadowRule: "no_pus"}},
		{"invalid UTF-8 in a filter", decisionlog.Query{Session: "\xff", Tool: "bash\xfe"}},
		{"every filter", decisionlog.Query{Tool: "bash", Level: "allow", Rule: "tools", Session: "s1", Agent: "rest",
			Since: base, Until: base.Add(time.Hour)}},
	}
}

// oracleIDs is what a query must return, computed from the entries given
// (entry i has id i+1), independent of either database.
func oracleIDs(entries []decisionlog.Entry, q decisionlog.Query) []int64 {
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, decisionlog.MaxPage)
	var ids []int64
	for i := len(entries) - 1; i >= 0; i-- {
		e, id := entries[i], int64(i+1)
		agent := e.Agent
		if agent == "" {
			agent = "rest"
		}
		ts := e.Time.UnixMicro()
		switch {
		case q.Tool != "" && e.Tool != q.Tool, q.Level != "" && e.Level != q.Level,
			q.Rule != "" && !strings.Contains(e.MatchedRule, q.Rule), q.Session != "" && e.Session != q.Session,
			q.Agent != "" && agent != q.Agent, !q.Since.IsZero() && ts < q.Since.UnixMicro(),
			q.Server != "" && !strings.HasPrefix(e.Tool, "mcp__"+q.Server+"__"),
			q.ToolPrefix != "" && !strings.HasPrefix(e.Tool, q.ToolPrefix),
			!q.Until.IsZero() && ts >= q.Until.UnixMicro(), q.Before > 0 && id >= q.Before:
			continue
		}
		if level, rule := shadowOf(e); q.Shadowed && level == "" || q.ShadowRule != "" && !strings.Contains(rule, "rules["+q.ShadowRule+"]") {
			continue
		}
		ids = append(ids, id)
	}
	ids = ids[min(max(q.Offset, 0), len(ids)):]
	return ids[:min(limit, len(ids))]
}

func entryIDs(list []decisionlog.Entry) []int64 {
	ids := []int64{}
	for _, e := range list {
		ids = append(ids, e.ID)
	}
	return ids
}

// TestPGDecisionLogConformance writes the same entries into the SQLite and
// the PostgreSQL log and checks that every query, cursor walk, series,
// Recent and Prune answers alike, and as computed from the entries.
func TestPGDecisionLogConformance(t *testing.T) {
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	clock := &testClock{now: base.Add(2 * time.Hour)}
	opts := decisionlog.Options{Now: clock.Now, Retention: 115 * time.Minute, MaxRows: 40, PruneEvery: time.Hour}
	sl, pl := openBothDecisionLogs(t, opts)
	entries := conformanceEntries(base)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for name, l := range map[string]decisionLogAPI{"sqlite": sl, "pg": pl} {
		for _, e := range entries {
			if !l.Enqueue(e) {
				t.Fatalf("%s: enqueue dropped an entry", name)
			}
		}
		if err := l.Flush(ctx); err != nil {
			t.Fatalf("%s: flush: %v", name, err)
		}
		if l.Written() != uint64(len(entries)) || l.Dropped() != 0 || l.Failed() != 0 || l.QueueLen() != 0 {
			t.Fatalf("%s: written %d dropped %d failed %d queued %d; want %d 0 0 0",
				name, l.Written(), l.Dropped(), l.Failed(), l.QueueLen(), len(entries))
		}
	}

	for _, c := range conformanceQueries(base) {
		sp, serr := sl.Query(ctx, c.q)
		pp, perr := pl.Query(ctx, c.q)
		if serr != nil || perr != nil {
			t.Fatalf("%s: sqlite err %v, pg err %v", c.note, serr, perr)
		}
		if !reflect.DeepEqual(sp, pp) {
			t.Errorf("%s: pages differ\nsqlite %+v\npg     %+v", c.note, sp, pp)
		}
		if got, want := entryIDs(pp.Entries), oracleIDs(entries, c.q); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%s: got ids %v, want %v", c.note, got, want)
		}
	}

	t.Run("cursor walk", func(t *testing.T) { compareCursorWalk(t, sl, pl, decisionlog.Query{Tool: "bash", Limit: 4}) })
	t.Run("level series", func(t *testing.T) { compareLevelSeries(t, sl, pl, entries, base) })
	t.Run("recent and redaction", func(t *testing.T) { compareRecent(t, sl, pl) })
	t.Run("prune", func(t *testing.T) {
		sn, serr := sl.Prune(ctx)
		pn, perr := pl.Prune(ctx)
		if serr != nil || perr != nil || sn != pn {
			t.Fatalf("pruned: sqlite %d (%v), pg %d (%v)", sn, serr, pn, perr)
		}
		// The retention keeps what is younger than 115 minutes, of which
		// MaxRows keeps the newest 40.
		young := oracleIDs(entries, decisionlog.Query{Since: clock.now.Add(-opts.Retention), Limit: decisionlog.MaxPage})
		kept := min(len(young), int(opts.MaxRows))
		sp, _ := sl.Query(ctx, decisionlog.Query{Limit: 100})
		pp, _ := pl.Query(ctx, decisionlog.Query{Limit: 100})
		if !reflect.DeepEqual(sp, pp) || !slices.Equal(entryIDs(pp.Entries), young[:kept]) || pn != int64(len(entries)-kept) {
			t.Errorf("after prune: sqlite kept %v, pg kept %v (pruned %d); want %v, %d pruned",
				entryIDs(sp.Entries), entryIDs(pp.Entries), pn, young[:kept], len(entries)-kept)
		}
		if kept == len(young) || len(young) == len(entries) {
			t.Fatalf("the prune case should cut by age and by count: %d young of %d, %d kept", len(young), len(entries), kept)
		}
	})
}

// compareCursorWalk pages through q with NextBefore on both logs.
func compareCursorWalk(t *testing.T, sl, pl decisionLogAPI, q decisionlog.Query) {
	ctx := context.Background()
	pages := 0
	for {
		sp, serr := sl.Query(ctx, q)
		pp, perr := pl.Query(ctx, q)
		if serr != nil || perr != nil {
			t.Fatalf("page %d: sqlite err %v, pg err %v", pages, serr, perr)
		}
		if !reflect.DeepEqual(sp, pp) {
			t.Fatalf("page %d differs\nsqlite %+v\npg     %+v", pages, sp, pp)
		}
		pages++
		if pp.NextBefore == 0 {
			break
		}
		q.Before = pp.NextBefore
	}
	if pages != 4 { // 15 bash entries, 4 a page
		t.Errorf("walked %d pages, want 4", pages)
	}
}

// compareLevelSeries checks buckets on both logs and against counts
// computed from the entries.
func compareLevelSeries(t *testing.T, sl, pl decisionLogAPI, entries []decisionlog.Entry, base time.Time) {
	ctx := context.Background()
	end := entries[len(entries)-1].Time
	cases := []struct {
		note string
		q    decisionlog.Query
		n    int
	}{
		{"one bucket", decisionlog.Query{Since: base, Until: end.Add(time.Microsecond)}, 1},
		{"seven uneven buckets", decisionlog.Query{Since: base, Until: end.Add(time.Microsecond)}, 7},
		{"a bucket per entry or so", decisionlog.Query{Since: base, Until: end}, 60},
		{"filtered", decisionlog.Query{Tool: "bash", Agent: "rest", Since: base, Until: end}, 5},
		{"a window inside the data", decisionlog.Query{Since: base.Add(7 * time.Minute), Until: base.Add(19 * time.Minute)}, 4},
		{"default window (the last 24 hours)", decisionlog.Query{}, 24},
		{"since not before until", decisionlog.Query{Since: end, Until: base}, 3},
		{"zero buckets count as one", decisionlog.Query{Since: base, Until: end}, 0},
		{"paging ignored", decisionlog.Query{Since: base, Until: end, Limit: 1, Before: 3, Offset: 9}, 2},
	}
	for _, c := range cases {
		ss, serr := sl.LevelSeries(ctx, c.q, c.n)
		ps, perr := pl.LevelSeries(ctx, c.q, c.n)
		if serr != nil || perr != nil {
			t.Fatalf("%s: sqlite err %v, pg err %v", c.note, serr, perr)
		}
		if !reflect.DeepEqual(ss, ps) {
			t.Errorf("%s: series differ\nsqlite %+v\npg     %+v", c.note, ss, ps)
		}
		var total, want int64
		for _, b := range ps {
			for _, n := range b.Counts {
				total += n
			}
		}
		inWindow := c.q
		inWindow.Limit, inWindow.Before, inWindow.Offset = decisionlog.MaxPage, 0, 0
		if inWindow.Since.IsZero() || !inWindow.Since.Before(inWindow.Until) {
			// The default window ends at the clock's now; the data all lies in it
			// for the 24-hour case and none of it for the reversed one.
			if c.q.Since.IsZero() {
				want = int64(len(entries))
			}
		} else {
			want = int64(len(oracleIDs(entries, inWindow)))
		}
		if total != want {
			t.Errorf("%s: buckets count %d entries, want %d", c.note, total, want)
		}
	}
}

// compareRecent checks Recent on both logs and that the writer redacted the
// raw calls it was given.
func compareRecent(t *testing.T, sl, pl decisionLogAPI) {
	ctx := context.Background()
	for _, n := range []int{0, 3, 100, -1} {
		sr, serr := sl.Recent(ctx, n)
		pr, perr := pl.Recent(ctx, n)
		if serr != nil || perr != nil {
			t.Fatalf("recent %d: sqlite err %v, pg err %v", n, serr, perr)
		}
		if !reflect.DeepEqual(sr, pr) {
			t.Errorf("recent %d differs\nsqlite %+v\npg     %+v", n, sr, pr)
		}
		if want := min(max(n, 0), 14); n >= 0 && len(pr) != want || n < 0 && len(pr) != 14 {
			t.Errorf("recent %d: %d entries, want %d of the 14 with requests", n, len(pr), want)
		}
	}
	all, _ := pl.Recent(ctx, 100)
	for _, e := range all {
		if _, raw := e.Request.ToolArgs["command"]; raw && e.Request.ToolArgs["command"] != "mysql -p[REDACTED] db" {
			t.Errorf("entry %d: request %+v, want the redacted command", e.ID, e.Request)
		}
	}
	page, _ := pl.Query(ctx, decisionlog.Query{Limit: 100})
	for _, e := range page.Entries {
		if strings.Contains(e.Summary, "SECRET") || e.Summary == "" {
			t.Errorf("entry %d: summary %q, want it redacted and not empty", e.ID, e.Summary)
		}
	}
}

// testClock is a settable clock.
type testClock struct{ now time.Time }

func (c *testClock) Now() time.Time { return c.now }
