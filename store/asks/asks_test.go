package asks

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/grants"
	"github.com/toolgate/toolgate/store/history"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

func openApprovals(t *testing.T, db *pg.DB) *Approvals {
	t.Helper()
	s, err := OpenApprovals(context.Background(), db)
	if err != nil {
		t.Fatalf("OpenApprovals: %v", err)
	}
	return s
}

// newAsk is a pending ask created now that expires after ttl.
func newAsk(id string, ttl time.Duration, args map[string]any) approval.Approval {
	now := time.Now().Truncate(time.Microsecond).UTC()
	return approval.Approval{
		ID: id, Status: approval.StatusPending, CreatedAt: now, ExpiresAt: now.Add(ttl),
		Request: approval.Request{ToolName: "bash", ToolArgs: args, ChannelID: "web", SessionID: "s1", Workspace: "/w"},
		Asked:   approval.Asked{MatchedRule: "tools.bash", Reason: "ask", ExternalPaths: []string{"/etc"}},
	}
}

func mustInsert(t *testing.T, s *Approvals, a approval.Approval, key string) approval.Approval {
	t.Helper()
	got, joined, err := s.Insert(context.Background(), a, key)
	if err != nil || joined {
		t.Fatalf("Insert %s: got joined=%v err=%v, want a new ask", a.ID, joined, err)
	}
	return got
}

// TestApprovalsRoundTrip: what Insert stores reads back the same, arguments
// with a NUL byte and non-ASCII text included, and Resolve's outcome and
// rule read back too.
func TestApprovalsRoundTrip(t *testing.T) {
	s := openApprovals(t, dbtest.Open(t, pgtest.NewDSN(t)))
	ctx := context.Background()
	in := newAsk("a1", time.Minute, map[string]any{"command": "printf 'x\x00y' | tee ü", "n": 3.5})
	mustInsert(t, s, in, "")
	got, err := s.Get(ctx, "a1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.Request.ToolArgs["command"] != in.Request.ToolArgs["command"] || got.Request.ToolArgs["n"] != 3.5 ||
		!got.CreatedAt.Equal(in.CreatedAt) || !got.ExpiresAt.Equal(in.ExpiresAt) || got.Asked.ExternalPaths[0] != "/etc" ||
		got.Request.SessionID != "s1" || got.Status != approval.StatusPending || got.Decision != "" || got.DecidedAt != nil {
		t.Errorf("Get: got %+v, want %+v", got, in)
	}
	at := time.Now().Truncate(time.Microsecond).UTC()
	rule := &policy.Override{ID: "r1", Pattern: "x"}
	out := approval.Outcome{Status: approval.StatusAllowed, Choice: approval.ChoiceAllowAlways, DecidedBy: "alice", Comment: "ok", DecidedAt: at}
	if _, err := s.Resolve(ctx, "a1", out, func(context.Context, approval.Approval) (*policy.Override, error) { return rule, nil }); err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	got, _ = s.Get(ctx, "a1")
	if got.Status != approval.StatusAllowed || got.Decision != approval.DecisionAllow || got.Choice != approval.ChoiceAllowAlways ||
		got.DecidedBy != "alice" || got.Comment != "ok" || got.DecidedAt == nil || !got.DecidedAt.Equal(at) || got.PersistedRule == nil || got.PersistedRule.ID != "r1" {
		t.Errorf("after Resolve: got %+v", got)
	}
	for _, id := range []string{"nope", "bad\x00id", "bad\xffid"} {
		if _, err := s.Get(ctx, id); !errors.Is(err, approval.ErrNotFound) {
			t.Errorf("Get %q: got %v, want ErrNotFound", id, err)
		}
		if _, err := s.Resolve(ctx, id, out, nil); !errors.Is(err, approval.ErrNotFound) {
			t.Errorf("Resolve %q: got %v, want ErrNotFound", id, err)
		}
	}
	mustInsert(t, s, newAsk("a2", time.Minute, nil), "")
	odd := approval.Outcome{Status: approval.StatusDenied, Choice: approval.ChoiceDeny, DecidedBy: "bob", Comment: "no\x00 \xff", DecidedAt: at}
	won, err := s.Resolve(ctx, "a2", odd, nil)
	if got, _ := s.Get(ctx, "a2"); err != nil || got.Comment != won.Comment || got.Comment != "no\uFFFD \uFFFD" {
		t.Errorf("comment with a NUL and bad UTF-8: got %q (winner told %q, err %v), want both %q", got.Comment, won.Comment, err, "no\uFFFD \uFFFD")
	}
}

// TestApprovalsResolveRules: the cases of Resolve, each on a fresh ask.
func TestApprovalsResolveRules(t *testing.T) {
	s := openApprovals(t, dbtest.Open(t, pgtest.NewDSN(t)))
	ctx := context.Background()
	now := time.Now().Truncate(time.Microsecond).UTC()
	prepErr := errors.New("policy write failed")
	for _, tc := range []struct {
		note       string
		ttl        time.Duration
		prepare    func(context.Context, approval.Approval) (*policy.Override, error)
		wantErr    error
		wantStatus approval.Status
	}{
		{note: "an answer before the deadline counts", ttl: time.Minute, wantStatus: approval.StatusDenied},
		{note: "an answer at or after the deadline expires the ask instead", ttl: -time.Second,
			wantErr: approval.ErrAlreadyDecided, wantStatus: approval.StatusExpired},
		{note: "a failing prepare changes nothing", ttl: time.Minute,
			prepare: func(context.Context, approval.Approval) (*policy.Override, error) { return nil, prepErr },
			wantErr: prepErr, wantStatus: approval.StatusPending},
		{note: "prepare is not called for an ask past its deadline", ttl: -time.Second,
			prepare: func(context.Context, approval.Approval) (*policy.Override, error) { return nil, prepErr },
			wantErr: approval.ErrAlreadyDecided, wantStatus: approval.StatusExpired},
	} {
		a := newAsk(tc.note, tc.ttl, map[string]any{"command": "x"})
		mustInsert(t, s, a, "")
		out := approval.Outcome{Status: approval.StatusDenied, Choice: approval.ChoiceDeny, DecidedBy: "bob", DecidedAt: now}
		_, err := s.Resolve(ctx, a.ID, out, tc.prepare)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
			t.Errorf("%s: got err %v, want %v", tc.note, err, tc.wantErr)
		}
		if got, _ := s.Get(ctx, a.ID); got.Status != tc.wantStatus {
			t.Errorf("%s: stored status %s, want %s", tc.note, got.Status, tc.wantStatus)
		}
	}
}

// TestApprovalsExpireOnce: replicas running expiry at the same moment
// expire each due ask exactly once between them; an ask not yet due stays.
func TestApprovalsExpireOnce(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	stores := []*Approvals{openApprovals(t, dbtest.Open(t, dsn)), openApprovals(t, dbtest.Open(t, dsn)), openApprovals(t, dbtest.Open(t, dsn))}
	const due = 30
	for i := range due {
		mustInsert(t, stores[i%3], newAsk("due-"+string(rune('a'+i)), -time.Second, map[string]any{"i": i}), "")
	}
	mustInsert(t, stores[0], newAsk("later", time.Hour, nil), "")
	counts := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for round := range 5 {
		for _, s := range stores {
			wg.Go(func() {
				got, err := s.ExpireDue(context.Background(), time.Now(), time.Hour)
				if err != nil {
					t.Errorf("round %d: ExpireDue: %v", round, err)
				}
				mu.Lock()
				for _, a := range got {
					counts[a.ID]++
				}
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	if len(counts) != due {
		t.Errorf("expired %d distinct asks, want %d", len(counts), due)
	}
	for id, n := range counts {
		if n != 1 {
			t.Errorf("%s expired %d times, want once", id, n)
		}
	}
	if got, _ := stores[1].Get(context.Background(), "later"); got.Status != approval.StatusPending {
		t.Errorf("ask not yet due: got %s, want pending", got.Status)
	}
}

// TestApprovalsExpiryLease: while another session holds the expiry lease,
// ExpireDue does nothing; once it is released, the due ask expires, and a
// resolved ask older than keep is removed.
func TestApprovalsExpiryLease(t *testing.T) {
	db := dbtest.Open(t, pgtest.NewDSN(t))
	s := openApprovals(t, db)
	ctx := context.Background()
	mustInsert(t, s, newAsk("due", -time.Second, nil), "")
	old := newAsk("old", time.Hour, nil)
	mustInsert(t, s, old, "")
	long := time.Now().Add(-2 * time.Hour).Truncate(time.Microsecond)
	if _, err := s.Resolve(ctx, "old", approval.Outcome{Status: approval.StatusDenied, DecidedBy: "bob", DecidedAt: long}, nil); err != nil {
		t.Fatalf("Resolve old: %v", err)
	}

	holder, err := db.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_lock($1)", expiryLockKey); err != nil {
		t.Fatal(err)
	}
	got, err := s.ExpireDue(ctx, time.Now(), time.Hour)
	if err != nil || len(got) != 0 {
		t.Errorf("lease held elsewhere: got %d expired, err %v; want none", len(got), err)
	}
	if a, _ := s.Get(ctx, "due"); a.Status != approval.StatusPending {
		t.Errorf("lease held elsewhere: due ask is %s, want pending", a.Status)
	}
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_unlock($1)", expiryLockKey); err != nil {
		t.Fatal(err)
	}
	got, err = s.ExpireDue(ctx, time.Now(), time.Hour)
	if err != nil || len(got) != 1 || got[0].ID != "due" || got[0].Status != approval.StatusExpired || got[0].DecidedBy != approval.PrincipalSystem {
		t.Errorf("lease free: got %+v, err %v; want the due ask expired by system", got, err)
	}
	if _, err := s.Get(ctx, "old"); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("resolved two hours ago with keep 1h: got %v, want it removed (ErrNotFound)", err)
	}
	if _, err := s.Get(ctx, "due"); err != nil {
		t.Errorf("just expired: got %v, want it kept", err)
	}
}

// TestApprovalsJoinKey: one pending ask per key; a resolved ask frees its
// key; no key never joins.
func TestApprovalsJoinKey(t *testing.T) {
	s := openApprovals(t, dbtest.Open(t, pgtest.NewDSN(t)))
	ctx := context.Background()
	mustInsert(t, s, newAsk("k1", time.Minute, nil), "s1\x00web\x00bash")
	got, joined, err := s.Insert(ctx, newAsk("k2", time.Minute, nil), "s1\x00web\x00bash")
	if err != nil || !joined || got.ID != "k1" || got.Joins != 1 {
		t.Errorf("same key: got %s joined=%v joins=%d err=%v, want a join of k1", got.ID, joined, got.Joins, err)
	}
	mustInsert(t, s, newAsk("k3", time.Minute, nil), "s2\x00web\x00bash")
	mustInsert(t, s, newAsk("n1", time.Minute, nil), "")
	mustInsert(t, s, newAsk("n2", time.Minute, nil), "")
	at := time.Now().Truncate(time.Microsecond)
	if _, err := s.Resolve(ctx, "k1", approval.Outcome{Status: approval.StatusDenied, DecidedBy: "bob", DecidedAt: at}, nil); err != nil {
		t.Fatal(err)
	}
	mustInsert(t, s, newAsk("k4", time.Minute, nil), "s1\x00web\x00bash")
	list, err := s.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range list {
		ids = append(ids, a.ID)
	}
	if want := []string{"k3", "n1", "n2", "k4"}; len(ids) != len(want) || ids[0] != "k3" || ids[3] != "k4" {
		t.Errorf("Pending: got %v, want %v", ids, want)
	}
}

// TestApprovalsRecordHistory: opening, answering and expiring asks are in
// the approval history as soon as they are stored (same transaction),
// with the tool arguments redacted there; a join adds no event.
func TestApprovalsRecordHistory(t *testing.T) {
	db := dbtest.Open(t, pgtest.NewDSN(t))
	s := openApprovals(t, db)
	h, err := history.OpenPG(context.Background(), db)
	if err != nil {
		t.Fatalf("OpenPG: %v", err)
	}
	ctx := context.Background()
	secret := "curl -H 'Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz123456' https://x.example"
	mustInsert(t, s, newAsk("h1", time.Minute, map[string]any{"command": secret}), "key")
	if _, joined, err := s.Insert(ctx, newAsk("h1-join", time.Minute, nil), "key"); err != nil || !joined {
		t.Fatalf("join: joined=%v err=%v", joined, err)
	}
	mustInsert(t, s, newAsk("h2", -time.Second, nil), "")
	at := time.Now().Truncate(time.Microsecond)
	if _, err := s.Resolve(ctx, "h1", approval.Outcome{Status: approval.StatusDenied, Choice: approval.ChoiceDeny, DecidedBy: "bob", DecidedAt: at}, nil); err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if _, err := s.ExpireDue(ctx, time.Now(), time.Hour); err != nil {
		t.Fatalf("ExpireDue: %v", err)
	}
	for _, tc := range []struct {
		note, id   string
		wantStatus approval.Status
		wantEvents int
	}{
		{note: "opened then denied", id: "h1", wantStatus: approval.StatusDenied, wantEvents: 2},
		{note: "opened then expired", id: "h2", wantStatus: approval.StatusExpired, wantEvents: 2},
	} {
		got, err := h.GetApproval(ctx, tc.id)
		if err != nil || got.Status != tc.wantStatus {
			t.Errorf("%s: history has %s (err %v), want %s", tc.note, got.Status, err, tc.wantStatus)
		}
		if cmd, _ := got.Request.ToolArgs["command"].(string); tc.id == "h1" && (cmd == secret || cmd == "") {
			t.Errorf("%s: history args %q, want the token redacted", tc.note, cmd)
		}
		events, err := h.ApprovalEvents(ctx, tc.id)
		if err != nil || len(events) != tc.wantEvents {
			t.Errorf("%s: got %d events (err %v), want %d", tc.note, len(events), err, tc.wantEvents)
		}
	}
	if _, err := h.GetApproval(ctx, "h1-join"); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("joined ask: got %v, want no history row of its own", err)
	}
}

// TestApprovalsSlowDatabaseIsUnavailable: a database that does not answer
// within one operation timeout (here: the table locked by another session)
// fails a new ask with store.ErrUnavailable, within about that timeout, so
// the caller can deny at once instead of hanging.
func TestApprovalsSlowDatabaseIsUnavailable(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	ctx := context.Background()
	db, err := pg.Open(ctx, dsn, pg.Options{OpTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(db.Close)
	s := openApprovals(t, db)
	holder := dbtest.Open(t, dsn)
	tx, err := holder.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE approval_asks IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = s.Insert(ctx, newAsk("slow", time.Minute, nil), "")
	if took := time.Since(start); !errors.Is(err, store.ErrUnavailable) || took > 3*time.Second {
		t.Errorf("Insert against a locked table: got %v after %v, want store.ErrUnavailable within about 0.5s", err, took)
	}
}

// openStore opens the policy in force on db, imported from an empty config
// dir, as a replica does.
func openStore(t *testing.T, db *pg.DB) *inforce.Holder {
	t.Helper()
	ctx := context.Background()
	p, err := store.OpenPGBackend(ctx, db)
	if err != nil {
		t.Fatalf("OpenPGBackend: %v", err)
	}
	if _, err := p.Import(ctx, t.TempDir()); err != nil {
		t.Fatalf("Import: %v", err)
	}
	s, err := inforce.OpenBackend(ctx, p, inforce.Options{Workspace: "/work/ws", HomeDir: "/home/u",
		ResolvePath: func(p string) string { return p }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("OpenBackend: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openGrants opens the grants table on db.
func openGrants(t *testing.T, db *pg.DB) *grants.PGStore {
	t.Helper()
	st, err := grants.OpenPG(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// ruleOf is the typed rule a request body decodes to (the edit ports take
// policy.Rule).
func ruleOf(m map[string]any) policy.Rule {
	r, _, _ := policy.DecodeRule(m, "rule")
	return r
}

var gitPush = &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "git push origin main"})}
