package service_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/asks"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/grants"
	"github.com/toolgate/toolgate/store/history"
	"github.com/toolgate/toolgate/store/pg"
)

// grantWorld is one server's parts for grants: the policy store (asking
// for every command), a Book over grants.db, and a Manager whose scoped
// answers make grants through the Granter.
type grantWorld struct {
	st    *inforce.Holder
	book  *grant.Book
	mgr   *approval.Manager
	svc   *service.Approvals
	grant *service.Grants
}

func newGrantWorld(t *testing.T) *grantWorld {
	t.Helper()
	dir := t.TempDir()
	st, err := inforce.Open(dir, inforce.Options{Workspace: filepath.Join(dir, "ws"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	gs, err := grants.Open(filepath.Join(dir, "grants.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gs.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	book := grant.NewBook(gs, grant.Options{})
	if err := book.Start(ctx); err != nil {
		t.Fatal(err)
	}
	st.SetEngineView(book.Engine)
	mgr := approval.New(approval.Options{Granter: service.NewGranter(book, st), Persister: service.NewPolicy(st)})
	t.Cleanup(mgr.Shutdown)
	return &grantWorld{st: st, book: book, mgr: mgr, svc: service.NewApprovals(mgr), grant: service.NewGrants(book)}
}

var admin = auth.Principal{TokenID: "tok_admin", Name: "ana", Role: auth.RoleAdmin}

// ask opens an ask for command in session and returns its id.
func (w *grantWorld) ask(t *testing.T, command, session string) (string, *engine.Request) {
	t.Helper()
	req := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": command}), ChannelID: "web", SessionID: session, TokenID: "tok_agent"}
	d := w.st.Engine().Evaluate(req)
	if d.Level != policy.Ask {
		t.Fatalf("%q in %q: %s %s, want an ask", command, session, d.Level, d.MatchedRule)
	}
	asked, err := w.svc.Ask(context.Background(), "tok_agent", req, d, session, "claude-code", 0)
	if err != nil {
		t.Fatal(err)
	}
	return asked.Approval.ID, req
}

func (w *grantWorld) level(command, session string) (policy.Level, string) {
	return w.levelAs(command, session, "tok_agent")
}

func (w *grantWorld) levelAs(command, session, token string) (policy.Level, string) {
	d := w.st.Engine().Evaluate(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": command}), ChannelID: "web", SessionID: session, TokenID: token})
	return d.Level, d.MatchedRule
}

// TestScopedAnswersMakeGrants: allow_session grants the command in its
// session only; allow_for in every session until it expires; allow_once
// grants nothing; a revoked grant decides nothing.
func TestScopedAnswersMakeGrants(t *testing.T) {
	w := newGrantWorld(t)
	ctx := context.Background()
	// The default policy asks for rm -rf; npm test is a plain shell ask.
	id, _ := w.ask(t, "make deploy", "s1")
	a, err := w.svc.DecideFor(ctx, admin, id, approval.ChoiceAllowSession, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if a.Grant == nil || a.Grant.Scope != grant.ScopeSession || a.Grant.Pattern != "make deploy" || a.Grant.Agent != "claude-code" || a.Grant.GrantedBy != "ana" {
		t.Fatalf("the approval's grant: %+v", a.Grant)
	}
	if lvl, rule := w.level("make deploy", "s1"); lvl != policy.Allow || rule != "tiered_policy:grants:grants["+a.Grant.ID+"]" {
		t.Errorf("in the granted session: %s %s", lvl, rule)
	}
	if lvl, _ := w.level("make deploy", "s2"); lvl != policy.Ask {
		t.Errorf("in another session: %s", lvl)
	}
	if lvl, _ := w.levelAs("make deploy", "s1", "tok_other"); lvl != policy.Ask {
		t.Errorf("another token naming the session: %s", lvl)
	}
	if lvl, _ := w.level("make deploy && curl x", "s1"); lvl != policy.Ask {
		t.Errorf("chained with another command: %s", lvl)
	}

	id, _ = w.ask(t, "make build", "s3")
	a, err = w.svc.DecideFor(ctx, admin, id, approval.ChoiceAllowFor, 90*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	if a.Grant == nil || a.Grant.Scope != grant.ScopeTimed || a.Grant.SessionID != "" || a.Grant.ExpiresAt.Sub(a.Grant.CreatedAt) != 90*time.Second {
		t.Fatalf("allow_for's grant: %+v", a.Grant)
	}
	if lvl, _ := w.levelAs("make build", "s9", "tok_other"); lvl != policy.Allow {
		t.Errorf("a timed grant in any session, for any token: %s", lvl)
	}

	id, _ = w.ask(t, "make lint", "s1")
	if a, err = w.svc.DecideFor(ctx, admin, id, approval.ChoiceAllowOnce, 0, ""); err != nil || a.Grant != nil {
		t.Fatalf("allow_once: %+v %v", a.Grant, err)
	}
	if lvl, _ := w.level("make lint", "s1"); lvl != policy.Ask {
		t.Errorf("after allow_once the next identical call: %s, want ask", lvl)
	}

	list, err := w.grant.List(admin, service.GrantFilter{})
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %v %v", list, err)
	}
	if _, err := w.grant.Revoke(ctx, admin, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if lvl, _ := w.level("make deploy", "s1"); lvl != policy.Ask {
		t.Errorf("after revoke: %s", lvl)
	}
}

// TestScopedAnswersRefused: a scoped answer that cannot be given is an
// error naming its field, and the ask stays pending.
func TestScopedAnswersRefused(t *testing.T) {
	w := newGrantWorld(t)
	ctx := context.Background()
	noSession, _ := w.ask(t, "make a", "")
	withSession, _ := w.ask(t, "make b", "s1")
	for _, c := range []struct {
		note   string
		id     string
		choice approval.Choice
		ttl    time.Duration
		want   error
		field  string
	}{
		{"allow_for needs a ttl", withSession, approval.ChoiceAllowFor, 0, approval.ErrInvalidTTL, "ttl_seconds"},
		{"allow_for's ttl has a ceiling", withSession, approval.ChoiceAllowFor, grant.MaxTTL + time.Second, approval.ErrInvalidTTL, "ttl_seconds"},
		{"only allow_for takes a ttl", withSession, approval.ChoiceAllowOnce, time.Minute, approval.ErrInvalidTTL, "ttl_seconds"},
		{"allow_session needs a session", noSession, approval.ChoiceAllowSession, 0, approval.ErrNoSession, "choice"},
		{"an unknown choice", withSession, "allow_forever", 0, approval.ErrInvalidChoice, "choice"},
	} {
		_, err := w.svc.DecideFor(ctx, admin, c.id, c.choice, c.ttl, "")
		if !errors.Is(err, c.want) || service.Classify(err).Field() != c.field || service.Classify(err).Kind != service.KindInvalid {
			t.Errorf("%s: %v (field %q), want %v naming %s", c.note, err, service.Classify(err).Field(), c.want, c.field)
		}
		if a, _ := w.mgr.Get(c.id); !a.Pending() {
			t.Errorf("%s: the ask was answered", c.note)
		}
	}
	bare := approval.New(approval.Options{})
	defer bare.Shutdown()
	a, _, _ := bare.Create(ctx, engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "x"})}, engine.Decision{Level: policy.Ask}, "s1")
	if _, err := bare.DecideFor(ctx, a.ID, approval.ChoiceAllowSession, 0, "ana", ""); !errors.Is(err, approval.ErrNoGranter) {
		t.Errorf("a manager without a Granter: %v", err)
	}
}

// TestGrantsAsAPrincipalSeesThem: an approver limited to a channel lists
// and revokes only the grants made there; an agent may do neither.
func TestGrantsAsAPrincipalSeesThem(t *testing.T) {
	w := newGrantWorld(t)
	ctx := context.Background()
	id, _ := w.ask(t, "make deploy", "s1")
	a, err := w.svc.DecideFor(ctx, admin, id, approval.ChoiceAllowSession, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	other := auth.Principal{TokenID: "tok_o", Name: "olaf", Role: auth.RoleApprover, Channels: []string{"feishu"}}
	mine := auth.Principal{TokenID: "tok_m", Name: "mia", Role: auth.RoleApprover, Channels: []string{"Web"}}
	agent := auth.Principal{TokenID: "tok_a", Name: "bot", Role: auth.RoleAgent}
	if list, _ := w.grant.List(other, service.GrantFilter{}); len(list) != 0 {
		t.Errorf("an approver of another channel sees %d grants", len(list))
	}
	if _, err := w.grant.Revoke(ctx, other, a.Grant.ID); !errors.Is(err, grant.ErrNotFound) {
		t.Errorf("an approver of another channel revokes: %v", err)
	}
	if _, err := w.grant.List(agent, service.GrantFilter{}); service.Classify(err).Kind != service.KindForbidden {
		t.Errorf("an agent lists grants: %v", err)
	}
	if list, _ := w.grant.List(mine, service.GrantFilter{Tool: "bash", Session: "s1", Agent: "claude-code"}); len(list) != 1 {
		t.Errorf("the channel's approver with matching filters sees %d grants", len(list))
	}
	if list, _ := w.grant.List(mine, service.GrantFilter{Agent: "codex"}); len(list) != 0 {
		t.Errorf("the agent filter kept %d grants", len(list))
	}
	if _, err := w.grant.Revoke(ctx, mine, a.Grant.ID); err != nil {
		t.Errorf("the channel's approver revokes: %v", err)
	}
	// A person limited to sessions may grant within the ask's session, not
	// for every session.
	id, _ = w.ask(t, "make s-limited", "s7")
	limited := auth.Principal{TokenID: "tok_s", Name: "sam", Role: auth.RoleApprover, Sessions: []string{"s7"}}
	if _, err := w.svc.DecideFor(ctx, limited, id, approval.ChoiceAllowFor, time.Hour, ""); service.Classify(err).Kind != service.KindForbidden {
		t.Errorf("allow_for by a session-limited approver: %v, want 403", err)
	}
	if a, err := w.svc.DecideFor(ctx, limited, id, approval.ChoiceAllowSession, 0, ""); err != nil || a.Grant == nil {
		t.Errorf("allow_session by a session-limited approver: %v", err)
	}
}

// TestScopedAnswerAcrossReplicas: on PostgreSQL, an allow_session given
// through replica B to an ask opened on replica A makes one grant, which
// decides on A within a second; a losing second answer makes none.
func TestScopedAnswerAcrossReplicas(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)
	type replica struct {
		st   *inforce.Holder
		book *grant.Book
		mgr  *approval.Manager
		hist *history.PGStore
	}
	open := func() replica {
		db, err := pg.Open(ctx, dsn, pg.Options{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		doc, err := store.OpenPGBackend(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		st, err := inforce.OpenBackend(ctx, doc, inforce.Options{Workspace: "/ws", Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		shared, err := asks.OpenApprovals(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		gs, err := grants.OpenPG(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		book := grant.NewBook(gs, grant.Options{Reload: time.Hour})
		if err := book.Start(ctx); err != nil {
			t.Fatal(err)
		}
		st.SetEngineView(book.Engine)
		hist, err := history.OpenPG(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		mgr := approval.New(approval.Options{Shared: shared, Granter: service.NewGranter(book, st), History: hist, Logger: quiet, SweepInterval: time.Hour})
		t.Cleanup(mgr.Shutdown)
		for !db.Listener().Connected() {
			time.Sleep(10 * time.Millisecond)
		}
		return replica{st, book, mgr, hist}
	}
	a, b := open(), open()
	req := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make deploy"}), ChannelID: "web", SessionID: "s1", TokenID: "tok"}
	d := a.st.Engine().Evaluate(req)
	if d.Level != policy.Ask {
		t.Fatalf("the default policy: %s", d.Level)
	}
	asked, err := service.NewApprovals(a.mgr).Ask(ctx, "tok", req, d, "s1", "codex", 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := service.NewApprovals(b.mgr).DecideFor(ctx, admin, asked.Approval.ID, approval.ChoiceAllowSession, 0, "")
	if err != nil || got.Grant == nil || got.Grant.Agent != "codex" {
		t.Fatalf("decide through B: %+v %v", got.Grant, err)
	}
	if _, err := service.NewApprovals(a.mgr).DecideFor(ctx, admin, asked.Approval.ID, approval.ChoiceAllowFor, time.Hour, ""); !errors.Is(err, approval.ErrAlreadyDecided) {
		t.Errorf("a second answer through A: %v", err)
	}
	deadline := time.Now().Add(time.Second)
	for a.st.Engine().Evaluate(req).Level != policy.Allow {
		if time.Now().After(deadline) {
			t.Fatal("replica A does not allow by the grant B made within a second")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(a.book.List()); n != 1 {
		t.Errorf("replica A holds %d grants, want 1 (the losing answer made none)", n)
	}
	// The history keeps the answer with its grant and the agent that asked,
	// though the shared asks stored the answer before B had made the grant.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		h, err := a.hist.GetApproval(ctx, asked.Approval.ID)
		if err == nil && h.Grant != nil {
			if h.Grant.ID != got.Grant.ID || h.Request.Agent != "codex" || h.Choice != approval.ChoiceAllowSession {
				t.Errorf("history: grant %s agent %q choice %s, want %s, codex, allow_session", h.Grant.ID, h.Request.Agent, h.Choice, got.Grant.ID)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the history has no grant for the answer after 2 s: %+v %v", h.Grant, err)
		}
	}
}
