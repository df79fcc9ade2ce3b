package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/asks"
	"github.com/toolgate/toolgate/store/pg"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// replica is one toolgate process's approvals on the shared database.
type replica struct {
	m  *approval.Manager
	db *pg.DB
}

// openReplica opens dsn as a replica named name (its connections carry the
// name as application_name) and starts a shared-mode Manager on it.
func openReplica(t *testing.T, dsn, name string, opts approval.Options) replica {
	t.Helper()
	ctx := context.Background()
	db, err := pg.Open(ctx, dsn, pg.Options{ApplicationName: name, OpTimeout: 2 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("pg.Open %s: %v", name, err)
	}
	shared, err := asks.OpenApprovals(ctx, db)
	if err != nil {
		db.Close()
		t.Fatalf("OpenApprovals %s: %v", name, err)
	}
	opts.Shared = shared
	if opts.SweepInterval == 0 {
		opts.SweepInterval = 50 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	m := approval.New(opts)
	t.Cleanup(func() { m.Shutdown(); db.Close() })
	return replica{m: m, db: db}
}

// openReplicas starts n replicas on one fresh database.
func openReplicas(t *testing.T, n int, opts approval.Options) ([]replica, string) {
	t.Helper()
	dsn := pgtest.Shared(t).NewDatabase(t)
	out := make([]replica, n)
	for i := range out {
		out[i] = openReplica(t, dsn, fmt.Sprintf("replica-%d", i), opts)
	}
	return out, dsn
}

// eventually polls cond every 10 ms until it holds or 15 s pass (a listener's reconnect backoff reaches 5 s).
// cuttablePair is two replicas on one database: A as the cluster's owner,
// B under a login role of its own, so B's connections (its notification
// listener among them) can be cut while A works on.
type cuttablePair struct {
	a, b    replica
	cluster *pgtest.Cluster
	dsn     string
	role    string
}

// openCuttablePair creates the login role and opens both replicas.
func openCuttablePair(t *testing.T, role string) cuttablePair {
	t.Helper()
	cluster := pgtest.Shared(t)
	dsn := cluster.NewDatabase(t)
	cluster.Psql(t, dsn, `CREATE ROLE `+role+` LOGIN SUPERUSER PASSWORD '`+role+`-secret'`)
	t.Cleanup(func() { cluster.Psql(t, cluster.DSN, `DROP ROLE IF EXISTS `+role) })
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, role+"-secret")
	return cuttablePair{
		a:       openReplica(t, dsn, "replica-a", approval.Options{Timeout: time.Minute}),
		b:       openReplica(t, u.String(), "replica-b", approval.Options{Timeout: time.Minute}),
		cluster: cluster, dsn: dsn, role: role,
	}
}

// cut keeps B from logging in and terminates its connections; it fails
// the test when B had none (then nothing was cut and the test proves nothing).
func (p cuttablePair) cut(t *testing.T) {
	t.Helper()
	p.cluster.Psql(t, p.dsn, `ALTER ROLE `+p.role+` NOLOGIN`)
	killed := p.cluster.Psql(t, p.dsn, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = '`+p.role+`'`)
	if killed == "0" {
		t.Fatal("no connection of replica B to terminate")
	}
}

// letBack lets B log in again.
func (p cuttablePair) letBack(t *testing.T) {
	t.Helper()
	p.cluster.Psql(t, p.dsn, `ALTER ROLE `+p.role+` LOGIN`)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 15s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// nextEvent returns the next event of ch, failing after 5 s.
func nextEvent(t *testing.T, ch <-chan approval.Event, who string) approval.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatalf("%s: subscription closed", who)
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no event within 5s", who)
	}
	return approval.Event{}
}

// visible waits until r holds id as pending (its notification or resync
// arrived).
func visible(t *testing.T, r replica, id string) {
	t.Helper()
	eventually(t, "ask "+id+" pending on a replica", func() bool {
		for _, a := range r.m.List(approval.Filter{}, approval.StatusPending) {
			if a.ID == id {
				return true
			}
		}
		return false
	})
}

// TestSharedAskAnsweredThroughAnotherReplica: an ask made on A reaches B's
// subscriber, is answered through C, and A's waiting Wait returns C's
// answer; B's subscriber sees it resolved, and a second answer through B is
// refused with the first answer.
func TestSharedAskAnsweredThroughAnotherReplica(t *testing.T) {
	rs, _ := openReplicas(t, 3, approval.Options{Timeout: time.Minute})
	a, b, c := rs[0], rs[1], rs[2]
	events, cancel := b.m.Subscribe()
	defer cancel()

	asked := mustCreate(t, a.m, bashReq("make deploy"), "s1")
	ev := nextEvent(t, events, "B")
	if ev.Type != approval.EventRequested || ev.Approval.ID != asked.ID || ev.Approval.Request.ToolArgs["command"] != "make deploy" {
		t.Fatalf("B's first event: got %s %+v, want %s of %s", ev.Type, ev.Approval, approval.EventRequested, asked.ID)
	}

	waited := make(chan approval.Approval, 1)
	go func() {
		got, err := a.m.Wait(context.Background(), asked.ID, 10*time.Second)
		if err != nil {
			t.Errorf("A's Wait: %v", err)
		}
		waited <- got
	}()
	decided, err := c.m.Decide(context.Background(), asked.ID, approval.ChoiceAllowOnce, "carol", "fine")
	if err != nil || decided.Status != approval.StatusAllowed || decided.DecidedBy != "carol" {
		t.Fatalf("C's Decide: got %+v %v, want allowed by carol", decided, err)
	}
	select {
	case got := <-waited:
		if got.Status != approval.StatusAllowed || got.Decision != approval.DecisionAllow || got.DecidedBy != "carol" || got.Comment != "fine" {
			t.Errorf("A's Wait: got %+v, want carol's allow", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("A's Wait did not return within 5s of C's answer")
	}
	ev = nextEvent(t, events, "B")
	if ev.Type != approval.EventResolved || ev.Approval.ID != asked.ID || ev.Approval.DecidedBy != "carol" {
		t.Errorf("B's second event: got %s %+v, want %s by carol", ev.Type, ev.Approval, approval.EventResolved)
	}
	again, err := b.m.Decide(context.Background(), asked.ID, approval.ChoiceDeny, "bob", "")
	if !errors.Is(err, approval.ErrAlreadyDecided) || again.DecidedBy != "carol" || again.Status != approval.StatusAllowed {
		t.Errorf("B's late Decide: got %+v %v, want carol's answer and ErrAlreadyDecided", again, err)
	}
}

// TestSharedFirstAnswerWins: three replicas answer the same asks at once
// with different choices; for each ask exactly one answer wins, every
// loser gets ErrAlreadyDecided with the winner's answer, and every replica
// ends up holding that answer.
func TestSharedFirstAnswerWins(t *testing.T) {
	persisters := []*recordingPersister{{}, {}, {}}
	rs := make([]replica, 3)
	dsn := pgtest.Shared(t).NewDatabase(t)
	for i := range rs {
		rs[i] = openReplica(t, dsn, fmt.Sprintf("replica-%d", i), approval.Options{Timeout: time.Minute, Persister: persisters[i]})
	}
	choices := []approval.Choice{approval.ChoiceAllowOnce, approval.ChoiceDeny, approval.ChoiceAllowAlways}
	const asks, perReplica = 8, 3
	for k := range asks {
		asked := mustCreate(t, rs[k%3].m, bashReq(fmt.Sprintf("deploy %d", k)), "")
		for _, r := range rs {
			visible(t, r, asked.ID)
		}
		type result struct {
			a   approval.Approval
			err error
			by  string
		}
		results := make(chan result, 3*perReplica)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, r := range rs {
			for j := range perReplica {
				by := fmt.Sprintf("approver-%d-%d", i, j)
				wg.Go(func() {
					<-start
					a, err := r.m.Decide(context.Background(), asked.ID, choices[(i+j)%3], by, "")
					results <- result{a, err, by}
				})
			}
		}
		close(start)
		wg.Wait()
		close(results)
		var winners []result
		var losers []result
		for res := range results {
			switch {
			case res.err == nil:
				winners = append(winners, res)
			case errors.Is(res.err, approval.ErrAlreadyDecided):
				losers = append(losers, res)
			default:
				t.Fatalf("ask %d: Decide by %s: unexpected %v", k, res.by, res.err)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("ask %d: got %d winning answers, want exactly 1", k, len(winners))
		}
		w := winners[0]
		if w.a.DecidedBy != w.by {
			t.Errorf("ask %d: winner %s stored as decided by %s", k, w.by, w.a.DecidedBy)
		}
		for _, l := range losers {
			if l.a.DecidedBy != w.by || l.a.Choice != w.a.Choice {
				t.Errorf("ask %d: loser %s saw %s/%s, want the winner's %s/%s", k, l.by, l.a.DecidedBy, l.a.Choice, w.by, w.a.Choice)
			}
		}
		for i, r := range rs {
			eventually(t, fmt.Sprintf("replica %d holds ask %d's answer", i, k), func() bool {
				got, err := r.m.Get(asked.ID)
				return err == nil && got.DecidedBy == w.by
			})
		}
	}
	// Always-allow was written only by winners: one override per winning
	// allow_always, never by a loser.
	wantPersisted := 0
	for _, r := range rs {
		for _, a := range r.m.List(approval.Filter{}, "") {
			if a.Choice == approval.ChoiceAllowAlways && a.PersistedRule != nil {
				wantPersisted++
			}
		}
	}
	gotPersisted := 0
	for _, p := range persisters {
		p.mu.Lock()
		gotPersisted += len(p.reqs)
		for _, req := range p.reqs {
			// The answering replica rebuilt the request from the stored ask.
			if cmd, _ := req.Call.Args()["command"].(string); req.Call.Tool() != "bash" || req.ChannelID != "web" || req.Workspace != "/w" || len(cmd) < 8 || cmd[:7] != "deploy " {
				t.Errorf("Persister got %+v, want the asked bash call", req)
			}
		}
		p.mu.Unlock()
	}
	if gotPersisted*3 != wantPersisted {
		t.Errorf("Persister calls: got %d, want one per allow_always win (%d seen across 3 replicas)", gotPersisted, wantPersisted)
	}
}

// TestSharedJoinAcrossReplicas: an identical ask made through another
// replica joins the pending one; a different session or no session does
// not join; identical asks made at once through two replicas open one ask.
func TestSharedJoinAcrossReplicas(t *testing.T) {
	rs, _ := openReplicas(t, 2, approval.Options{Timeout: time.Minute})
	a, b := rs[0], rs[1]
	ctx := context.Background()
	first := mustCreate(t, a.m, bashReq("git push"), "s1")
	joined, isJoin, err := b.m.Create(ctx, bashReq("git push"), askDecision(), "s1")
	if err != nil || !isJoin || joined.ID != first.ID {
		t.Fatalf("identical ask on B: got id %s joined=%v err=%v, want a join of %s", joined.ID, isJoin, err, first.ID)
	}
	eventually(t, "A sees the join", func() bool {
		got, err := a.m.Get(first.ID)
		return err == nil && got.Joins == 1
	})
	for _, tc := range []struct {
		note    string
		session string
	}{
		{note: "another session", session: "s2"},
		{note: "no session", session: ""},
	} {
		other, isJoin, err := b.m.Create(ctx, bashReq("git push"), askDecision(), tc.session)
		if err != nil || isJoin || other.ID == first.ID {
			t.Errorf("%s: got id %s joined=%v err=%v, want a new ask", tc.note, other.ID, isJoin, err)
		}
	}
	// Once answered, the same ask opens a new one.
	if _, err := b.m.Decide(ctx, first.ID, approval.ChoiceDeny, "bob", ""); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	fresh, isJoin, err := a.m.Create(ctx, bashReq("git push"), askDecision(), "s1")
	if err != nil || isJoin || fresh.ID == first.ID {
		t.Errorf("after the answer: got id %s joined=%v err=%v, want a new ask", fresh.ID, isJoin, err)
	}

	// Races: the same new ask through both replicas at once, many times.
	for i := range 20 {
		req := bashReq(fmt.Sprintf("race %d", i))
		ids := make([]string, 2)
		joins := make([]bool, 2)
		var wg sync.WaitGroup
		for j, r := range rs {
			wg.Go(func() {
				got, isJoin, err := r.m.Create(ctx, req, askDecision(), "s1")
				if err != nil {
					t.Errorf("race %d: Create: %v", i, err)
				}
				ids[j], joins[j] = got.ID, isJoin
			})
		}
		wg.Wait()
		if ids[0] != ids[1] || joins[0] == joins[1] {
			t.Errorf("race %d: got ids %v joined %v, want one ask, opened once and joined once", i, ids, joins)
		}
	}
}

// TestSharedExpiryOnce: an unanswered ask expires once, as deny, and every
// replica's waiters and subscribers see the same expiry.
func TestSharedExpiryOnce(t *testing.T) {
	rs, _ := openReplicas(t, 3, approval.Options{Timeout: 300 * time.Millisecond})
	subs := make([]<-chan approval.Event, len(rs))
	for i, r := range rs {
		ch, cancel := r.m.Subscribe()
		defer cancel()
		subs[i] = ch
	}
	asked := mustCreate(t, rs[0].m, bashReq("sleep 1"), "s1")
	var got [3]approval.Approval
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Go(func() {
			a, err := r.m.Wait(context.Background(), asked.ID, 10*time.Second)
			if err != nil {
				t.Errorf("replica %d Wait: %v", i, err)
			}
			got[i] = a
		})
	}
	wg.Wait()
	for i, a := range got {
		if a.Status != approval.StatusExpired || a.Decision != approval.DecisionDeny || a.DecidedBy != approval.PrincipalSystem {
			t.Errorf("replica %d: got %+v, want expired (deny) by system", i, a)
		}
		if a.DecidedAt == nil || got[0].DecidedAt == nil || !a.DecidedAt.Equal(*got[0].DecidedAt) {
			t.Errorf("replica %d: decided at %v, replica 0 at %v: want one expiry", i, a.DecidedAt, got[0].DecidedAt)
		}
	}
	for i, ch := range subs {
		if ev := nextEvent(t, ch, "requested"); ev.Type != approval.EventRequested {
			t.Errorf("replica %d: first event %s, want %s", i, ev.Type, approval.EventRequested)
		}
		if ev := nextEvent(t, ch, "resolved"); ev.Type != approval.EventResolved || ev.Approval.Status != approval.StatusExpired {
			t.Errorf("replica %d: second event %s %s, want %s expired", i, ev.Type, ev.Approval.Status, approval.EventResolved)
		}
		select {
		case ev := <-ch:
			t.Errorf("replica %d: extra event %s %s", i, ev.Type, ev.Approval.Status)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if _, err := rs[2].m.Decide(context.Background(), asked.ID, approval.ChoiceAllowOnce, "carol", ""); !errors.Is(err, approval.ErrAlreadyDecided) {
		t.Errorf("answer after expiry: got %v, want ErrAlreadyDecided", err)
	}
}

// TestSharedResyncAfterListenerLoss: while B's notification connection is
// gone (killed with pg_terminate_backend, and B kept from logging in
// again), an ask is made and another answered through A; once B is back,
// its resync delivers both, to its list, its subscribers and its waiter.
func TestSharedResyncAfterListenerLoss(t *testing.T) {
	p := openCuttablePair(t, "replica_b")
	a, b := p.a, p.b

	before := mustCreate(t, a.m, bashReq("before the cut"), "s1")
	visible(t, b, before.ID)
	events, cancel := b.m.Subscribe()
	defer cancel()
	waited := make(chan approval.Approval, 1)
	go func() {
		got, _ := b.m.Wait(context.Background(), before.ID, 20*time.Second)
		waited <- got
	}()

	p.cut(t)
	during := mustCreate(t, a.m, bashReq("during the cut"), "s1")
	if _, err := a.m.Decide(context.Background(), before.ID, approval.ChoiceDeny, "alice", "no"); err != nil {
		t.Fatalf("Decide on A: %v", err)
	}
	time.Sleep(300 * time.Millisecond) // the notifications are sent, and lost to B
	if _, err := b.m.Get(during.ID); err == nil {
		t.Fatal("B knew of the new ask while cut off: the test proves nothing")
	}
	p.letBack(t)

	visible(t, b, during.ID)
	select {
	case got := <-waited:
		if got.Status != approval.StatusDenied || got.DecidedBy != "alice" {
			t.Errorf("B's Wait after resync: got %+v, want alice's deny", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("B's Wait did not return after the resync")
	}
	seen := map[string]string{}
	for len(seen) < 2 {
		ev := nextEvent(t, events, "B after resync")
		seen[ev.Approval.ID] = ev.Type
	}
	if seen[before.ID] != approval.EventResolved || seen[during.ID] != approval.EventRequested {
		t.Errorf("B's events after resync: got %v, want %s resolved and %s requested", seen, before.ID, during.ID)
	}
}

// TestSharedDatabaseDown: with the database stopped, a new ask fails with
// store.ErrUnavailable, an answer fails the same way, and a pending wait
// keeps waiting until the ask's deadline, then ends as expired (deny);
// when the database is back, asks work again.
func TestSharedDatabaseDown(t *testing.T) {
	cluster := pgtest.Start(t)
	dsn := cluster.NewDatabase(t)
	r := openReplica(t, dsn, "replica-a", approval.Options{Timeout: 2 * time.Second})
	ctx := context.Background()
	pending := mustCreate(t, r.m, bashReq("while down"), "s1")
	if err := cluster.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	if _, _, err := r.m.Create(ctx, bashReq("new while down"), askDecision(), "s1"); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Create while down: got %v, want store.ErrUnavailable", err)
	}
	if _, err := r.m.Decide(ctx, pending.ID, approval.ChoiceAllowOnce, "alice", ""); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Decide while down: got %v, want store.ErrUnavailable", err)
	}
	start := time.Now()
	got, err := r.m.Wait(ctx, pending.ID, 20*time.Second)
	waited := time.Since(start)
	if err != nil || got.Status != approval.StatusExpired || got.Decision != approval.DecisionDeny {
		t.Errorf("Wait while down: got %+v %v, want expired (deny)", got, err)
	}
	if until := time.Until(pending.ExpiresAt); waited < until-100*time.Millisecond && until > 0 {
		t.Errorf("Wait ended %v before the deadline", until)
	}
	if waited > 10*time.Second {
		t.Errorf("Wait took %v: it should end about one sweep after the 2s deadline", waited)
	}

	if err := cluster.Start(); err != nil {
		t.Fatalf("Start again: %v", err)
	}
	eventually(t, "asks work again", func() bool {
		_, _, err := r.m.Create(ctx, bashReq("after"), askDecision(), "s1")
		return err == nil
	})
}

// TestSharedWebhookOncePerAsk: every replica runs a Notifier following its
// Manager, yet each new ask is posted once, by the replica it was opened
// through; a join through another replica posts nothing.
func TestSharedWebhookOncePerAsk(t *testing.T) {
	rs, _ := openReplicas(t, 3, approval.Options{Timeout: time.Minute})
	rc := newReceiver(t)
	notifiers := make([]*approval.Notifier, len(rs))
	for i, r := range rs {
		notifiers[i] = newNotifier(t, fastOptions(rc.srv.URL))
		notifiers[i].Follow(r.m)
	}
	events, cancel := rs[2].m.Subscribe()
	defer cancel()
	first := mustCreate(t, rs[0].m, bashReq("make deploy"), "s1")
	second := mustCreate(t, rs[1].m, bashReq("make release"), "s1")
	if _, joined, err := rs[2].m.Create(context.Background(), bashReq("make deploy"), askDecision(), "s1"); err != nil || !joined {
		t.Fatalf("identical ask on the third replica: joined=%v err=%v, want a join", joined, err)
	}
	for _, r := range rs {
		visible(t, r, first.ID)
		visible(t, r, second.ID)
	}
	for range 2 {
		if ev := nextEvent(t, events, "third replica"); ev.Local {
			t.Errorf("third replica: event of %s is Local, want it learned from another replica", ev.Approval.ID)
		}
	}
	eventually(t, "two posts", func() bool { return len(rc.received()) >= 2 })
	time.Sleep(300 * time.Millisecond) // room for a wrong third post
	posted := map[string]int{}
	for _, p := range rc.received() {
		var body approval.WebhookPayload
		if err := json.Unmarshal(p.body, &body); err != nil {
			t.Fatalf("payload: %v", err)
		}
		posted[body.Approval.ID]++
	}
	if len(posted) != 2 || posted[first.ID] != 1 || posted[second.ID] != 1 {
		t.Errorf("posts per ask: got %v, want one each for %s and %s", posted, first.ID, second.ID)
	}
}

// TestSharedShutdownLeavesAsksForOthers: a replica shutting down wakes its
// own waiters with a cancelled answer, but its asks stay pending for the
// other replicas: the same call retried through B joins the ask, and an
// answer through B reaches B's waiter.
func TestSharedShutdownLeavesAsksForOthers(t *testing.T) {
	rs, _ := openReplicas(t, 2, approval.Options{Timeout: time.Minute})
	a, b := rs[0], rs[1]
	ctx := context.Background()
	asked := mustCreate(t, a.m, bashReq("terraform apply"), "s1")
	visible(t, b, asked.ID)
	waited := make(chan approval.Approval, 1)
	go func() {
		got, _ := a.m.Wait(ctx, asked.ID, 20*time.Second)
		waited <- got
	}()
	time.Sleep(50 * time.Millisecond)
	a.m.Shutdown()
	select {
	case got := <-waited:
		if got.Status != approval.StatusCancelled || got.Decision != approval.DecisionDeny {
			t.Errorf("A's waiter at shutdown: got %+v, want cancelled (deny)", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("A's waiter did not wake at shutdown")
	}
	if _, _, err := a.m.Create(ctx, bashReq("x"), askDecision(), "s1"); !errors.Is(err, approval.ErrClosed) {
		t.Errorf("Create after Shutdown: got %v, want ErrClosed", err)
	}
	retried, joined, err := b.m.Create(ctx, bashReq("terraform apply"), askDecision(), "s1")
	if err != nil || !joined || retried.ID != asked.ID {
		t.Fatalf("retry through B: got %s joined=%v err=%v, want a join of %s", retried.ID, joined, err, asked.ID)
	}
	go func() {
		got, _ := b.m.Wait(ctx, asked.ID, 20*time.Second)
		waited <- got
	}()
	if _, err := b.m.Decide(ctx, asked.ID, approval.ChoiceAllowOnce, "bob", ""); err != nil {
		t.Fatalf("answer through B: %v", err)
	}
	select {
	case got := <-waited:
		if got.Status != approval.StatusAllowed {
			t.Errorf("B's waiter: got %+v, want allowed", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("B's waiter did not wake")
	}
}
