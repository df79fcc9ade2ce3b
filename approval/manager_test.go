package approval_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

func askDecision() engine.Decision {
	return engine.Decision{
		Level:         policy.Ask,
		MatchedRule:   "tools.bash",
		Reason:        "Approval required for bash (rule: tools.bash)",
		ExternalPaths: []string{"/etc/passwd"},
	}
}

func bashReq(cmd string) engine.Request {
	return engine.Request{Call: engine.NewCall("bash", map[string]any{"command": cmd}), ChannelID: "web", Workspace: "/w"}
}

func newManager(t *testing.T, opts approval.Options) *approval.Manager {
	t.Helper()
	m := approval.New(opts)
	t.Cleanup(m.Shutdown)
	return m
}

func mustCreate(t *testing.T, m *approval.Manager, req engine.Request, session string) approval.Approval {
	t.Helper()
	a, joined, err := m.Create(context.Background(), req, askDecision(), session)
	if err != nil || joined {
		t.Fatalf("Create: got joined=%v err=%v, want a new approval", joined, err)
	}
	return a
}

func TestCreateCarriesContext(t *testing.T) {
	m := newManager(t, approval.Options{Timeout: time.Minute})
	a := mustCreate(t, m, bashReq("cat /etc/passwd"), "s1")
	if a.Status != approval.StatusPending || a.Decision != "" || a.DecidedAt != nil {
		t.Errorf("new approval state: got %+v, want pending with no decision", a)
	}
	if len(a.ID) < 20 {
		t.Errorf("id %q: want at least 20 random characters", a.ID)
	}
	if got, want := a.ExpiresAt.Sub(a.CreatedAt), time.Minute; got != want {
		t.Errorf("expires - created: got %v, want %v", got, want)
	}
	if a.Request.ToolName != "bash" || a.Request.SessionID != "s1" || a.Request.ChannelID != "web" || a.Request.Workspace != "/w" || a.Request.ToolArgs["command"] != "cat /etc/passwd" {
		t.Errorf("request: got %+v", a.Request)
	}
	if a.Asked.MatchedRule != "tools.bash" || a.Asked.Reason == "" || len(a.Asked.ExternalPaths) != 1 {
		t.Errorf("asked: got %+v", a.Asked)
	}
	b := mustCreate(t, m, bashReq("ls"), "s1")
	if a.ID == b.ID {
		t.Errorf("two asks share id %q", a.ID)
	}
}

func TestCreateRefusesWhatIsNotAnAsk(t *testing.T) {
	m := newManager(t, approval.Options{})
	owner := bashReq("ls")
	owner.Scope = &engine.Scope{AvatarMode: true, PrincipalUserID: "u"}
	allow := askDecision()
	allow.Level = policy.Allow
	tests := []struct {
		note string
		req  engine.Request
		dec  engine.Decision
	}{
		{"owner-scope calls are never prompted", owner, askDecision()},
		{"an allow decision is not an ask", bashReq("ls"), allow},
		{"empty tool name", engine.Request{}, askDecision()},
	}
	for _, tt := range tests {
		_, _, err := m.Create(context.Background(), tt.req, tt.dec, "s")
		if !errors.Is(err, approval.ErrInvalidRequest) {
			t.Errorf("%s: got err %v, want ErrInvalidRequest", tt.note, err)
		}
	}
	if n := len(m.List(approval.Filter{}, "")); n != 0 {
		t.Errorf("refused creates left %d approvals", n)
	}
}

func TestFirstAnswerWinsUnderConcurrency(t *testing.T) {
	m := newManager(t, approval.Options{Persister: &recordingPersister{}})
	a := mustCreate(t, m, bashReq("rm -rf build"), "s1")
	choices := []approval.Choice{approval.ChoiceAllowOnce, approval.ChoiceDeny, approval.ChoiceAllowAlways}
	const n = 64
	var wins, conflicts atomic.Int32
	var winner atomic.Value
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			c := choices[i%len(choices)]
			_, err := m.Decide(context.Background(), a.ID, c, "alice", "")
			switch {
			case err == nil:
				wins.Add(1)
				winner.Store(c)
			case errors.Is(err, approval.ErrAlreadyDecided):
				conflicts.Add(1)
			default:
				t.Errorf("Decide: unexpected err %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if wins.Load() != 1 || conflicts.Load() != n-1 {
		t.Fatalf("got %d wins and %d conflicts, want 1 and %d", wins.Load(), conflicts.Load(), n-1)
	}
	got, _ := m.Get(a.ID)
	if got.Choice != winner.Load().(approval.Choice) {
		t.Errorf("stored choice %q, want the winner's %q", got.Choice, winner.Load())
	}
}

func TestDecideOutcomes(t *testing.T) {
	m := newManager(t, approval.Options{})
	a := mustCreate(t, m, bashReq("make"), "s1")
	got, err := m.Decide(context.Background(), a.ID, approval.ChoiceAllowOnce, "alice", "looks fine")
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	if got.Status != approval.StatusAllowed || got.Decision != "allow" || got.DecidedBy != "alice" || got.Comment != "looks fine" || got.DecidedAt == nil {
		t.Errorf("decided approval: got %+v", got)
	}
	later, err := m.Decide(context.Background(), a.ID, approval.ChoiceDeny, "bob", "")
	if !errors.Is(err, approval.ErrAlreadyDecided) {
		t.Errorf("second answer: got err %v, want ErrAlreadyDecided", err)
	}
	if later.DecidedBy != "alice" {
		t.Errorf("second answer returned decided_by %q, want the winner alice", later.DecidedBy)
	}
	if _, err := m.Decide(context.Background(), "nope", approval.ChoiceDeny, "bob", ""); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("unknown id: got %v, want ErrNotFound", err)
	}
	b := mustCreate(t, m, bashReq("make test"), "s1")
	bad := []struct {
		note, choice, principal, comment string
		want                             error
	}{
		{"unknown choice", "maybe", "bob", "", approval.ErrInvalidChoice},
		{"empty principal", "deny", " ", "", approval.ErrInvalidRequest},
		{"comment too long", "deny", "bob", string(make([]byte, approval.MaxCommentLen+1)), approval.ErrInvalidRequest},
		{"allow_always without a persister", "allow_always", "bob", "", approval.ErrNoPersister},
	}
	for _, tt := range bad {
		if _, err := m.Decide(context.Background(), b.ID, approval.Choice(tt.choice), tt.principal, tt.comment); !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.note, err, tt.want)
		}
	}
	if cur, _ := m.Get(b.ID); !cur.Pending() {
		t.Errorf("bad answers changed the approval: %+v", cur)
	}
	d, err := m.Decide(context.Background(), b.ID, approval.ChoiceDeny, "bob", "")
	if err != nil || d.Status != approval.StatusDenied || d.Decision != "deny" {
		t.Errorf("deny: got %+v, %v", d, err)
	}
}

func TestWaitWakesOnDecision(t *testing.T) {
	m := newManager(t, approval.Options{})
	a := mustCreate(t, m, bashReq("make"), "s1")
	res := make(chan approval.Approval, 1)
	go func() {
		got, err := m.Wait(context.Background(), a.ID, time.Minute)
		if err != nil {
			t.Errorf("Wait: %v", err)
		}
		res <- got
	}()
	time.Sleep(5 * time.Millisecond) // let the waiter block
	if _, err := m.Decide(context.Background(), a.ID, approval.ChoiceAllowOnce, "alice", ""); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-res:
		if got.Status != approval.StatusAllowed {
			t.Errorf("Wait returned status %q, want allowed", got.Status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not wake on the decision")
	}
}

func TestWaitTimeoutAndContext(t *testing.T) {
	clock := newFakeClock()
	m := newManager(t, approval.Options{Clock: clock, Timeout: time.Hour})
	a := mustCreate(t, m, bashReq("make"), "s1")
	res := make(chan approval.Approval, 1)
	go func() {
		got, _ := m.Wait(context.Background(), a.ID, 30*time.Second)
		res <- got
	}()
	waitUntil(t, func() bool { clock.Advance(time.Second); return len(res) == 1 })
	if got := <-res; !got.Pending() {
		t.Errorf("Wait at timeout: got %q, want the pending state", got.Status)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Wait(ctx, a.ID, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a cancelled context: got %v, want context.Canceled", err)
	}
	if got, err := m.Wait(context.Background(), a.ID, 0); err != nil || !got.Pending() {
		t.Errorf("Wait(0): got %q %v, want the current pending state", got.Status, err)
	}
	if _, err := m.Wait(context.Background(), "nope", time.Second); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("Wait unknown id: got %v, want ErrNotFound", err)
	}
}

func TestExpiryDenies(t *testing.T) {
	clock := newFakeClock()
	m := newManager(t, approval.Options{Clock: clock, Timeout: 300 * time.Second})
	a := mustCreate(t, m, bashReq("make"), "s1")
	clock.Advance(299 * time.Second)
	if got, _ := m.Get(a.ID); !got.Pending() {
		t.Fatalf("before the timeout: got %q, want pending", got.Status)
	}
	clock.Advance(time.Second)
	got, _ := m.Get(a.ID)
	if got.Status != approval.StatusExpired || got.Decision != "deny" || got.DecidedBy != approval.PrincipalSystem {
		t.Errorf("after the timeout: got %+v, want expired/deny by system", got)
	}
	if _, err := m.Decide(context.Background(), a.ID, approval.ChoiceAllowOnce, "alice", ""); !errors.Is(err, approval.ErrAlreadyDecided) {
		t.Errorf("answer after expiry: got %v, want ErrAlreadyDecided", err)
	}
}

func TestExpiryWakesWaiterRealClock(t *testing.T) {
	m := newManager(t, approval.Options{Timeout: 30 * time.Millisecond})
	a := mustCreate(t, m, bashReq("make"), "s1")
	got, err := m.Wait(context.Background(), a.ID, 10*time.Second)
	if err != nil || got.Status != approval.StatusExpired || got.Decision != "deny" {
		t.Errorf("Wait on an unanswered ask: got %q/%q %v, want expired/deny", got.Status, got.Decision, err)
	}
}

func TestIdenticalAsksJoin(t *testing.T) {
	m := newManager(t, approval.Options{})
	events, cancel := m.Subscribe()
	defer cancel()
	req := engine.Request{Call: engine.NewCall("write_file", map[string]any{"path": "/x", "content": "a", "opts": map[string]any{"b": 1, "a": 2}}), ChannelID: "web"}
	first := mustCreate(t, m, req, "s1")
	same := engine.Request{Call: engine.NewCall("write_file", map[string]any{"opts": map[string]any{"a": 2, "b": 1}, "content": "a", "path": "/x"}), ChannelID: "web"}
	got, joined, err := m.Create(context.Background(), same, askDecision(), "s1")
	if err != nil || !joined || got.ID != first.ID || got.Joins != 1 {
		t.Errorf("identical ask: got id %q joined=%v joins=%d err=%v, want to join %q", got.ID, joined, got.Joins, err, first.ID)
	}
	others := []struct {
		note    string
		req     engine.Request
		session string
	}{
		{"another session", req, "s2"},
		{"no session never joins", req, ""},
		{"another channel", engine.Request{Call: engine.NewCall("write_file", req.Call.Args()), ChannelID: "cli"}, "s1"},
		{"other args", engine.Request{Call: engine.NewCall("write_file", map[string]any{"path": "/y"}), ChannelID: "web"}, "s1"},
	}
	for _, o := range others {
		if _, joined, err := m.Create(context.Background(), o.req, askDecision(), o.session); err != nil || joined {
			t.Errorf("%s: got joined=%v err=%v, want a new approval", o.note, joined, err)
		}
	}
	if n := countEvents(events, approval.EventRequested); n != 1+len(others) {
		t.Errorf("requested events: got %d, want %d (a join prompts nobody)", n, 1+len(others))
	}
	if _, err := m.Decide(context.Background(), first.ID, approval.ChoiceDeny, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if _, joined, _ := m.Create(context.Background(), req, askDecision(), "s1"); joined {
		t.Error("an ask after the first was answered joined it; want a new prompt")
	}
}

func countEvents(ch <-chan approval.Event, typ string) int {
	n := 0
	for {
		select {
		case ev, open := <-ch:
			if !open {
				return n
			}
			if ev.Type == typ {
				n++
			}
		default:
			return n
		}
	}
}

type recordingPersister struct {
	mu   sync.Mutex
	reqs []engine.Request
	err  error
}

func (p *recordingPersister) AlwaysAllow(_ context.Context, req *engine.Request, by string) (policy.Override, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return policy.Override{}, false, p.err
	}
	p.reqs = append(p.reqs, *req)
	cmd, _ := req.Call.Args()["command"].(string)
	return policy.Override{ID: "user_allow_bash_command_make", Pattern: cmd}, true, nil
}

func TestAllowAlwaysPersists(t *testing.T) {
	p := &recordingPersister{err: errors.New("disk full")}
	m := newManager(t, approval.Options{Persister: p})
	a := mustCreate(t, m, bashReq("make"), "s1")
	_, err := m.Decide(context.Background(), a.ID, approval.ChoiceAllowAlways, "alice", "")
	if err == nil || !errors.Is(err, p.err) {
		t.Fatalf("persister failure: got %v, want it wrapped", err)
	}
	if got, _ := m.Get(a.ID); !got.Pending() {
		t.Fatalf("after a persister failure: got %q, want still pending", got.Status)
	}
	p.mu.Lock()
	p.err = nil
	p.mu.Unlock()
	got, err := m.Decide(context.Background(), a.ID, approval.ChoiceAllowAlways, "alice", "")
	if err != nil || got.Status != approval.StatusAllowed || got.Choice != approval.ChoiceAllowAlways {
		t.Fatalf("allow_always: got %+v %v", got, err)
	}
	if len(p.reqs) != 1 || p.reqs[0].Call.Tool() != "bash" || p.reqs[0].Call.Args()["command"] != "make" || p.reqs[0].Workspace != "/w" {
		t.Errorf("persister got %+v, want the one bash make request", p.reqs)
	}
	if got.PersistedRule == nil || got.PersistedRule.Pattern != "make" {
		t.Errorf("persisted_rule: got %v", got.PersistedRule)
	}
}

func TestShutdownCancelsAndWakes(t *testing.T) {
	m := approval.New(approval.Options{})
	events, _ := m.Subscribe()
	a := mustCreate(t, m, bashReq("make"), "s1")
	res := make(chan approval.Approval, 1)
	go func() {
		got, _ := m.Wait(context.Background(), a.ID, time.Minute)
		res <- got
	}()
	time.Sleep(5 * time.Millisecond)
	m.Shutdown()
	select {
	case got := <-res:
		if got.Status != approval.StatusCancelled || got.Decision != "deny" {
			t.Errorf("waiter woke with %q/%q, want cancelled/deny", got.Status, got.Decision)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not wake the waiter")
	}
	if _, _, err := m.Create(context.Background(), bashReq("ls"), askDecision(), "s1"); !errors.Is(err, approval.ErrClosed) {
		t.Errorf("Create after Shutdown: got %v, want ErrClosed", err)
	}
	if n := countEvents(events, approval.EventResolved); n != 1 {
		t.Errorf("resolved events before close: got %d, want 1", n)
	}
	if _, open := <-events; open {
		t.Error("subscription still open after Shutdown")
	}
	m.Shutdown() // idempotent
}

func TestCancel(t *testing.T) {
	m := newManager(t, approval.Options{})
	a := mustCreate(t, m, bashReq("make"), "s1")
	got, err := m.Cancel(a.ID, "", "agent went away")
	if err != nil || got.Status != approval.StatusCancelled || got.DecidedBy != approval.PrincipalSystem {
		t.Errorf("Cancel: got %+v %v", got, err)
	}
	if _, err := m.Cancel(a.ID, "", ""); !errors.Is(err, approval.ErrAlreadyDecided) {
		t.Errorf("second Cancel: got %v, want ErrAlreadyDecided", err)
	}
}

func TestSlowSubscriberNeverBlocks(t *testing.T) {
	m := newManager(t, approval.Options{})
	stuck, _ := m.SubscribeFilter(approval.Filter{}, 1)
	live, cancel := m.SubscribeFilter(approval.Filter{}, 1000)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			mustCreate(t, m, bashReq("echo "+string(rune('a'+i%26))+time.Now().String()), "")
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Create blocked on a subscriber that never reads")
	}
	if n := countEvents(live, approval.EventRequested); n != 200 {
		t.Errorf("live subscriber: got %d events, want 200", n)
	}
	<-stuck // the one buffered event
	if _, open := <-stuck; open {
		t.Error("lagging subscriber was not dropped")
	}
	if got := m.Stats().SubscribersDropped; got != 1 {
		t.Errorf("SubscribersDropped: got %d, want 1", got)
	}
}

func TestFilterLimitsListAndEvents(t *testing.T) {
	m := newManager(t, approval.Options{})
	f := approval.Filter{Channels: []string{"web"}, Sessions: []string{"s1"}}
	events, cancel := m.SubscribeFilter(f, 10)
	defer cancel()
	mustCreate(t, m, bashReq("a"), "s1")
	mustCreate(t, m, bashReq("b"), "s2")
	cli := bashReq("c")
	cli.ChannelID = "cli"
	mustCreate(t, m, cli, "s1")
	if got := len(m.List(f, approval.StatusPending)); got != 1 {
		t.Errorf("filtered List: got %d, want 1", got)
	}
	if got := len(m.List(approval.Filter{}, approval.StatusPending)); got != 3 {
		t.Errorf("unfiltered List: got %d, want 3", got)
	}
	if got := len(m.List(approval.Filter{}, approval.StatusAllowed)); got != 0 {
		t.Errorf("List allowed: got %d, want 0", got)
	}
	if n := countEvents(events, approval.EventRequested); n != 1 {
		t.Errorf("filtered events: got %d, want 1", n)
	}
}

func TestRetentionForgetsResolved(t *testing.T) {
	clock := newFakeClock()
	m := newManager(t, approval.Options{Clock: clock, Retention: time.Minute})
	a := mustCreate(t, m, bashReq("make"), "s1")
	if _, err := m.Decide(context.Background(), a.ID, approval.ChoiceDeny, "alice", ""); err != nil {
		t.Fatal(err)
	}
	clock.Advance(59 * time.Second)
	if _, err := m.Get(a.ID); err != nil {
		t.Errorf("within retention: %v", err)
	}
	clock.Advance(time.Second)
	if _, err := m.Get(a.ID); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("after retention: got %v, want ErrNotFound", err)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
