package history

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

// historyAPI is the method set the SQLite and the PostgreSQL approval
// histories share.
type historyAPI interface {
	approval.History
	GetApproval(ctx context.Context, id string) (approval.Approval, error)
	ListApprovals(ctx context.Context, q Query) (Page, error)
	ApprovalEvents(ctx context.Context, id string) ([]Event, error)
	Close() error
}

var (
	_ historyAPI = (*Store)(nil)
	_ historyAPI = (*PGStore)(nil)
)

// openBothHistories opens a SQLite history on a temp file and a PostgreSQL
// one on a fresh database.
func openBothHistories(t *testing.T) (sqliteHist, pgHist historyAPI) {
	t.Helper()
	sh, err := Open(filepath.Join(t.TempDir(), "approvals.db"))
	if err != nil {
		t.Fatalf("sqlite history: %v", err)
	}
	t.Cleanup(func() { sh.Close() })
	ph, err := OpenPG(context.Background(), dbtest.Open(t, pgtest.NewDSN(t)))
	if err != nil {
		t.Fatalf("pg history: %v", err)
	}
	t.Cleanup(func() { ph.Close() })
	return sh, ph
}

// askAt is a pending ask created at t.
func askAt(id string, t time.Time, session string) approval.Approval {
	return approval.Approval{
		ID: id, Status: approval.StatusPending, CreatedAt: t, ExpiresAt: t.Add(5 * time.Minute),
		Request: approval.Request{ToolName: "bash", ToolArgs: map[string]any{"command": "mysql -pSECRET db", "n": 3.0},
			ChannelID: "web", SessionID: session, Workspace: "/w"},
		Asked: approval.Asked{MatchedRule: "tools.bash", Reason: "Approval required for bash", ExternalPaths: []string{"/etc"}},
	}
}

// answered is a ended as st at t.
func answered(a approval.Approval, st approval.Status, c approval.Choice, by, comment string, t time.Time) approval.Approval {
	a.Status, a.Choice, a.DecidedBy, a.Comment, a.DecidedAt = st, c, by, comment, &t
	a.Decision = approval.Outcome{Status: st}.Decision()
	return a
}

// historyScript is what both histories record, in order: asks created with
// nanosecond times (two pairs at the same instant, whose ids order
// differently bytewise than in most locales), answered, expired, cancelled,
// joined, and writes that must change nothing: a repeat, a late answer
// after the first, and a move back to pending. Asks carry the step that
// asked, or none.
func historyScript(base time.Time) []approval.Approval {
	t := func(d time.Duration) time.Time { return base.Add(d) }
	a := askAt("a1", t(0), "s1")
	b := askAt("B1", t(0), "s1")
	c := askAt("c1", t(time.Second+7), "s2")
	d := askAt("d1", t(2*time.Second+11), "sé")
	e := askAt("e1", t(3*time.Second), "s1")
	f := askAt("f1", t(4*time.Second), "s2")
	f.Asked.ExternalPaths = nil
	a.Asked.Cause, c.Asked.Cause, d.Asked.Cause = engine.CauseEscalation, engine.CauseRule, engine.CauseExternal
	g := askAt("g-1", t(5*time.Second), "s1")
	h := askAt("g1", t(5*time.Second), "s1")

	cDone := answered(c, approval.StatusAllowed, approval.ChoiceAllowAlways, "alice", "fine", t(time.Minute+3))
	cDone.PersistedRule = &policy.Override{ID: "user_allow_bash", Pattern: "mysql *", Extra: map[string]any{"tool": "bash"}}
	dExpired := answered(d, approval.StatusExpired, "", approval.PrincipalSystem, "no answer before the timeout", t(5*time.Minute))
	eDenied := answered(e, approval.StatusDenied, approval.ChoiceDeny, "bob", "", t(2*time.Minute))
	eLate := answered(e, approval.StatusAllowed, approval.ChoiceAllowOnce, "carol", "late", t(3*time.Minute))
	fJoined := f
	fJoined.Joins = 2
	fDone := answered(fJoined, approval.StatusCancelled, "", "admin", "shutting down", t(6*time.Minute))
	return []approval.Approval{a, b, c, d, e, f, g, h, cDone, dExpired, eDenied, eDenied, eLate, e, fJoined, fDone, cDone}
}

// TestHistoryConformance records the same script into the SQLite and the
// PostgreSQL history and checks that every read answers alike, and as the
// script says.
func TestHistoryConformance(t *testing.T) {
	sh, ph := openBothHistories(t)
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.UTC)
	script := historyScript(base)
	for _, a := range script {
		if err := sh.RecordApproval(ctx, a); err != nil {
			t.Fatalf("sqlite record %s: %v", a.ID, err)
		}
		if err := ph.RecordApproval(ctx, a); err != nil {
			t.Fatalf("pg record %s: %v", a.ID, err)
		}
	}

	sp, serr := sh.PendingApprovals(ctx)
	pp, perr := ph.PendingApprovals(ctx)
	if serr != nil || perr != nil || !reflect.DeepEqual(sp, pp) {
		t.Errorf("pending differ (errs %v, %v)\nsqlite %+v\npg     %+v", serr, perr, sp, pp)
	}
	if got, want := approvalIDs(pp), []string{"B1", "a1", "g-1", "g1"}; !slices.Equal(got, want) {
		t.Errorf("pending: got %v, want %v (oldest first, ties by id bytewise)", got, want)
	}

	known := []string{"a1", "B1", "c1", "d1", "e1", "f1", "g-1", "g1"}
	for _, id := range append(known, "nope", "a1\x00", "\xff") {
		compareOne(t, sh, ph, id, slices.Contains(known, id))
	}
	checkRecorded(t, ph, base)
	t.Run("list", func(t *testing.T) { compareLists(t, sh, ph) })
}

// compareOne compares GetApproval and ApprovalEvents of one id.
func compareOne(t *testing.T, sh, ph historyAPI, id string, known bool) {
	ctx := context.Background()
	sa, serr := sh.GetApproval(ctx, id)
	pa, perr := ph.GetApproval(ctx, id)
	if !errors.Is(perr, serr) && perr != serr || !reflect.DeepEqual(sa, pa) {
		t.Errorf("get %s differs\nsqlite %+v (%v)\npg     %+v (%v)", id, sa, serr, pa, perr)
	}
	if !known && !errors.Is(perr, approval.ErrNotFound) || known && perr != nil {
		t.Errorf("get %q: err %v, want approval.ErrNotFound only for an unknown id", id, perr)
	}
	se, serr := sh.ApprovalEvents(ctx, id)
	pe, perr := ph.ApprovalEvents(ctx, id)
	if serr != nil || perr != nil || !reflect.DeepEqual(se, pe) {
		t.Errorf("events of %s differ (errs %v, %v)\nsqlite %+v\npg     %+v", id, serr, perr, se, pe)
	}
}

// checkRecorded checks what the script must have left, on the PostgreSQL
// history (the comparisons make the SQLite one the same).
func checkRecorded(t *testing.T, ph historyAPI, base time.Time) {
	ctx := context.Background()
	e, _ := ph.GetApproval(ctx, "e1")
	if e.Status != approval.StatusDenied || e.DecidedBy != "bob" || e.DecidedAt == nil || !e.DecidedAt.Equal(base.Add(2*time.Minute)) {
		t.Errorf("e1: got %+v, want the first answer (denied by bob) kept", e)
	}
	c, _ := ph.GetApproval(ctx, "c1")
	if !c.CreatedAt.Equal(base.Add(time.Second+7)) || c.CreatedAt.Nanosecond() != 123456796 || c.PersistedRule == nil || c.PersistedRule.Pattern != "mysql *" || c.PersistedRule.Extra["tool"] != "bash" {
		t.Errorf("c1: created %v rule %v, want the nanosecond time and the rule", c.CreatedAt, c.PersistedRule)
	}
	for id, want := range map[string]string{"a1": engine.CauseEscalation, "c1": engine.CauseRule, "d1": engine.CauseExternal, "e1": ""} {
		if got, _ := ph.GetApproval(ctx, id); got.Asked.Cause != want {
			t.Errorf("%s: cause %q, want %q", id, got.Asked.Cause, want)
		}
	}
	if c.Request.ToolArgs["command"] != "mysql -p[REDACTED] db" || c.Request.ToolArgs["n"] != 3.0 {
		t.Errorf("c1 args: got %v, want the command redacted and n kept", c.Request.ToolArgs)
	}
	f, _ := ph.GetApproval(ctx, "f1")
	if f.Joins != 2 || f.Status != approval.StatusCancelled || f.Asked.ExternalPaths != nil {
		t.Errorf("f1: got %+v, want cancelled with 2 joins and no external paths", f)
	}
	for id, want := range map[string][]approval.Status{
		"a1": {approval.StatusPending},
		"c1": {approval.StatusPending, approval.StatusAllowed},
		"e1": {approval.StatusPending, approval.StatusDenied},
		"f1": {approval.StatusPending, approval.StatusCancelled},
	} {
		events, err := ph.ApprovalEvents(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var got []approval.Status
		for _, ev := range events {
			got = append(got, ev.Status)
		}
		if !slices.Equal(got, want) {
			t.Errorf("events of %s: got %v, want %v", id, got, want)
		}
	}
}

// compareLists compares ListApprovals pages, cursor walks and bad cursors.
func compareLists(t *testing.T, sh, ph historyAPI) {
	ctx := context.Background()
	queries := []struct {
		note string
		q    Query
		want int
	}{
		{"everything", Query{}, 8},
		{"pending", Query{Status: approval.StatusPending}, 4},
		{"allowed", Query{Status: approval.StatusAllowed}, 1},
		{"session", Query{SessionID: "s1"}, 5},
		{"multi-byte session", Query{SessionID: "sé"}, 1},
		{"status and session", Query{Status: approval.StatusPending, SessionID: "s1"}, 4},
		{"no match", Query{SessionID: "nobody"}, 0},
		{"limit above the maximum", Query{Limit: 10_000}, 8},
		{"bad bytes in filters", Query{Status: "pending\x00", SessionID: "s1\xff"}, 0},
		{"bad bytes in a cursor's id", Query{Cursor: nanos(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) + ".\xff\x00"}, 8},
		{"a valid cursor before everything", Query{Cursor: "1.a"}, 0},
		{"a cursor inside a tie", Query{Cursor: nanos(time.Date(2026, 3, 1, 10, 0, 5, 123456789, time.UTC)) + ".g1"}, 7},
	}
	for _, c := range queries {
		sp, serr := sh.ListApprovals(ctx, c.q)
		pp, perr := ph.ListApprovals(ctx, c.q)
		if serr != nil || perr != nil || !reflect.DeepEqual(sp, pp) {
			t.Errorf("%s: pages differ (errs %v, %v)\nsqlite %+v\npg     %+v", c.note, serr, perr, sp, pp)
		}
		if len(pp.Approvals) != c.want {
			t.Errorf("%s: %d approvals, want %d", c.note, len(pp.Approvals), c.want)
		}
	}
	for _, limit := range []int{1, 2, 3} {
		var walked []string
		q := Query{Limit: limit}
		for pages := 0; pages < 20; pages++ {
			sp, serr := sh.ListApprovals(ctx, q)
			pp, perr := ph.ListApprovals(ctx, q)
			if serr != nil || perr != nil || !reflect.DeepEqual(sp, pp) {
				t.Fatalf("limit %d page %d differs (errs %v, %v)\nsqlite %+v\npg     %+v", limit, pages, serr, perr, sp, pp)
			}
			walked = append(walked, approvalIDs(pp.Approvals)...)
			if pp.NextCursor == "" {
				break
			}
			q.Cursor = pp.NextCursor
		}
		if want := []string{"g1", "g-1", "f1", "e1", "d1", "c1", "a1", "B1"}; !slices.Equal(walked, want) {
			t.Errorf("walk with limit %d: got %v, want %v", limit, walked, want)
		}
	}
	for _, cursor := range []string{"x", "12", ".a1", "12.", "abc.def", "1e3.a1", " 12.a1"} {
		_, serr := sh.ListApprovals(ctx, Query{Cursor: cursor})
		_, perr := ph.ListApprovals(ctx, Query{Cursor: cursor})
		if !errors.Is(serr, ErrBadCursor) || !errors.Is(perr, ErrBadCursor) {
			t.Errorf("cursor %q: sqlite err %v, pg err %v; want ErrBadCursor from both", cursor, serr, perr)
		}
	}
}

func nanos(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }

func approvalIDs(list []approval.Approval) []string {
	var ids []string
	for _, a := range list {
		ids = append(ids, a.ID)
	}
	return ids
}

// TestHistoryConformanceGrant: both histories keep the agent that asked and
// the grant an answer made, its pattern masked, and read them back alike,
// also when the grant is written after its answer (as shared mode does); a
// late answer after the first, with a grant of its own, changes neither.
func TestHistoryConformanceGrant(t *testing.T) {
	sh, ph := openBothHistories(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC)
	ask := askAt("gr1", at.Add(-time.Minute), "s9")
	ask.Request.Agent = "codex"
	done := answered(ask, approval.StatusAllowed, approval.ChoiceAllowSession, "alice", "", at)
	done.Grant = &grant.Grant{ID: "g-7", ToolName: "bash", Scope: grant.ScopeSession, Pattern: "mysql -pSECRET db",
		SessionID: "s9", TokenID: "tok1", ChannelID: "web", GrantedBy: "alice", CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour)}
	stored := done
	stored.Grant = nil // shared mode stores the answer before the manager has its grant
	late := answered(ask, approval.StatusDenied, approval.ChoiceDeny, "bob", "", at.Add(time.Second))
	other := answered(ask, approval.StatusAllowed, approval.ChoiceAllowSession, "carol", "", at.Add(2*time.Second))
	other.Grant = &grant.Grant{ID: "g-8", ToolName: "bash", Scope: grant.ScopeSession, SessionID: "s9",
		ChannelID: "web", GrantedBy: "carol", CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	for _, a := range []approval.Approval{ask, stored, done, late, other} {
		if err := sh.RecordApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := ph.RecordApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	compareOne(t, sh, ph, "gr1", true)
	got, _ := ph.GetApproval(ctx, "gr1")
	if got.Request.Agent != "codex" || got.Grant == nil || got.Grant.ID != "g-7" || !got.Grant.ExpiresAt.Equal(at.Add(24*time.Hour)) {
		t.Fatalf("read back agent %q grant %+v, want codex and g-7 until a day after the answer", got.Request.Agent, got.Grant)
	}
	if strings.Contains(got.Grant.Pattern, "SECRET") {
		t.Errorf("grant pattern %q kept the secret", got.Grant.Pattern)
	}
}
