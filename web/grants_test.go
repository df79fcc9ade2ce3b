package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/grants"
)

// grantsEnv is the pages over a real policy store with a Book of grants
// in a real grants.db, on a clock the test moves.
type grantsEnv struct {
	srv    *httptest.Server
	st     *inforce.Holder
	tokens *auth.Tokens
	book   *grant.Book
	clock  *testClock
}

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

func newGrantsEnv(t *testing.T) grantsEnv {
	t.Helper()
	clock := &testClock{t: time.Now().UTC().Truncate(time.Second)}
	gs, err := grants.Open(filepath.Join(t.TempDir(), "grants.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gs.Close() })
	book := grant.NewBook(gs, grant.Options{Now: clock.Now})
	srv, st, tokens := testServerWith(t, func(st *inforce.Holder, tokens *auth.Tokens) Deps {
		return Deps{Policy: st, Tokens: tokens, Grants: book}
	})
	return grantsEnv{srv: srv, st: st, tokens: tokens, book: book, clock: clock}
}

// add stores a grant made now that lasts d.
func (e grantsEnv) add(t *testing.T, g grant.Grant, d time.Duration) grant.Grant {
	t.Helper()
	// Each grant a millisecond after the last, so that "oldest first" is
	// the order they were added (grants.db keeps milliseconds).
	e.clock.Add(time.Millisecond)
	g.CreatedAt = e.clock.Now()
	g.ExpiresAt = g.CreatedAt.Add(d)
	if g.ChannelID == "" {
		g.ChannelID = "web"
	}
	if g.GrantedBy == "" {
		g.GrantedBy = "admin"
	}
	out, err := e.book.Add(context.Background(), g)
	if err != nil {
		t.Fatalf("add grant %+v: %v", g, err)
	}
	return out
}

var grantRowID = regexp.MustCompile(`data-grant-id="([^"]+)"`)

// grantIDs lists the grant rows a page shows.
func grantIDs(page string) []string {
	var out []string
	for _, m := range grantRowID.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestGrantsPageListsFiltersAndHidesExpired: the page lists the live
// grants with what each covers in words, filters them by agent, session
// and tool from the query, and never shows one past its expiry.
func TestGrantsPageListsFiltersAndHidesExpired(t *testing.T) {
	e := newGrantsEnv(t)
	admin, _ := e.tokens.AdminToken()
	deploy := e.add(t, grant.Grant{ToolName: "bash", Scope: grant.ScopeSession, MatchType: "command", Pattern: "make deploy",
		SessionID: "s1", Agent: "claude-code", Summary: "make deploy"}, time.Hour)
	read := e.add(t, grant.Grant{ToolName: "mcp__fs__search", Scope: grant.ScopeTimed, ArgsDigest: "abc123",
		SessionID: "s2", Agent: "mcp", Summary: `{"query":"todo"}`}, 15*time.Minute)
	short := e.add(t, grant.Grant{ToolName: "read_file", Scope: grant.ScopeTimed, MatchType: "path", Pattern: "/tmp/x",
		Agent: "codex"}, 2*time.Minute)
	c, _, _ := login(t, e.srv, admin)

	cases := []struct {
		note  string
		query string
		want  []string
	}{
		{note: "no filter lists every live grant, oldest first", query: "", want: []string{deploy.ID, read.ID, short.ID}},
		{note: "by agent", query: "?agent=mcp", want: []string{read.ID}},
		{note: "by session finds the session grants of it", query: "?session=s1", want: []string{deploy.ID}},
		{note: "a timed grant is not a session's, though made in one", query: "?session=s2", want: nil},
		{note: "by tool", query: "?tool=read_file", want: []string{short.ID}},
		{note: "filters add up", query: "?agent=claude-code&tool=read_file", want: nil},
	}
	for _, tc := range cases {
		status, page := get(t, c, e.srv.URL+"/grants"+tc.query)
		if status != http.StatusOK {
			t.Fatalf("%s: status %d", tc.note, status)
		}
		if got := grantIDs(page); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: rows %v, want %v", tc.note, got, tc.want)
		}
	}

	_, page := get(t, c, e.srv.URL+"/grants")
	for _, want := range []string{"command <code class=\"id\">make deploy</code>", "this exact call", "{&#34;query&#34;:&#34;todo&#34;}",
		"this session, until it expires", "any session on its channel, for 15 min", "claude-code", `href="/grants"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not say %q", want)
		}
	}

	// Three minutes on, the two-minute grant is past its expiry: it is
	// gone from the page although nothing swept it.
	e.clock.Add(3 * time.Minute)
	_, page = get(t, c, e.srv.URL+"/grants")
	if got := grantIDs(page); strings.Join(got, ",") != deploy.ID+","+read.ID {
		t.Errorf("after the short grant expired: rows %v, want %s and %s", got, deploy.ID, read.ID)
	}
}

// TestGrantsRevokeConfirmsAndChecksWho: a revoke asks once more on a page
// of its own (the grant still holds until then), needs the session's CSRF
// token, and only someone who may answer the grant's asks may take it
// back; a grant already gone says so.
func TestGrantsRevokeConfirmsAndChecksWho(t *testing.T) {
	e := newGrantsEnv(t)
	admin, _ := e.tokens.AdminToken()
	_, slackOnly, _ := e.tokens.Create("sam", auth.RoleApprover, []string{"slack"}, nil)
	_, anyApprover, _ := e.tokens.Create("ann", auth.RoleApprover, nil, nil)
	cases := []struct {
		note        string
		token       string
		noCSRF      bool
		confirm     bool
		status      int
		wantPage    string
		wantRevoked bool
	}{
		{note: "the first post only asks", token: admin, status: http.StatusOK, wantPage: "Revoke grant"},
		{note: "confirmed, the admin revokes it", token: admin, confirm: true, status: http.StatusOK, wantPage: "Revoked grant", wantRevoked: true},
		{note: "an approver of every channel revokes it", token: anyApprover, confirm: true, status: http.StatusOK, wantPage: "Revoked grant", wantRevoked: true},
		{note: "an approver of other channels finds it gone", token: slackOnly, confirm: true, status: http.StatusOK, wantPage: "no longer live"},
		{note: "without the CSRF token nothing happens", token: admin, confirm: true, noCSRF: true, status: http.StatusForbidden},
	}
	for _, tc := range cases {
		g := e.add(t, grant.Grant{ToolName: "bash", Scope: grant.ScopeSession, MatchType: "command", Pattern: "make deploy", SessionID: "s1"}, time.Hour)
		c, _, _ := login(t, e.srv, tc.token)
		_, page := get(t, c, e.srv.URL+"/grants")
		form := url.Values{"id": {g.ID}}
		if !tc.noCSRF {
			form.Set("csrf_token", match(csrfField, page))
		}
		if tc.confirm {
			form.Set("confirm", "yes")
		}
		status, body := post(t, c, e.srv.URL+"/grants/revoke", form)
		if status != tc.status || !strings.Contains(body, tc.wantPage) {
			t.Errorf("%s: status %d, want %d with %q in: %.300s", tc.note, status, tc.status, tc.wantPage, body)
		}
		live := false
		for _, l := range e.book.List() {
			live = live || l.ID == g.ID
		}
		if live == tc.wantRevoked {
			t.Errorf("%s: grant live %v after the post, want revoked %v", tc.note, live, tc.wantRevoked)
		}
		if !tc.wantRevoked {
			_, _ = e.book.Revoke(context.Background(), g.ID)
		}
	}
	// Revoking one already gone says so.
	c, _, _ := login(t, e.srv, admin)
	_, page := get(t, c, e.srv.URL+"/grants")
	_, body := post(t, c, e.srv.URL+"/grants/revoke", url.Values{"csrf_token": {match(csrfField, page)}, "id": {"g_gone"}, "confirm": {"yes"}})
	if !strings.Contains(body, "no longer live") {
		t.Errorf("revoking a grant that is gone: %.300s", body)
	}
}

// TestGrantsPageAlwaysAllowed: the overrides "always allow" wrote (and only
// those) are listed under the grants; an admin revokes one there under the
// policy's ETag after a confirmation, an approver may not.
func TestGrantsPageAlwaysAllowed(t *testing.T) {
	e := newGrantsEnv(t)
	admin, _ := e.tokens.AdminToken()
	_, approver, _ := e.tokens.Create("ann", auth.RoleApprover, nil, nil)
	o, _, err := service.NewPolicy(e.st).AlwaysAllow(context.Background(), &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make deploy"})}, "ann")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.AddApprovalOverride(policy.Override{ID: "hand_written", Tools: []string{"bash"}, Pattern: "ls *", Action: policy.Allow}); err != nil {
		t.Fatal(err)
	}
	id := str(o.Map()["id"])
	ac, _, _ := login(t, e.srv, admin)
	_, page := get(t, ac, e.srv.URL+"/grants")
	if !strings.Contains(page, `data-override-id="`+id+`"`) || strings.Contains(page, `data-override-id="hand_written"`) {
		t.Fatalf("the page should list %s (always allow) and not hand_written", id)
	}
	if !strings.Contains(page, "grant-override-revoke") {
		t.Errorf("an admin has no revoke for the always-allow override")
	}

	pc, _, _ := login(t, e.srv, approver)
	_, ppage := get(t, pc, e.srv.URL+"/grants")
	if strings.Contains(ppage, "grant-override-revoke") || strings.Contains(ppage, `data-testid="read-only"`) {
		t.Errorf("an approver's page: override revoke shown or marked read-only")
	}
	form := url.Values{"csrf_token": {match(csrfField, ppage)}, "etag": {match(etagField, page)}, "id": {id}, "confirm": {"yes"}}
	if status, _ := post(t, pc, e.srv.URL+"/grants/override/delete", form); status != http.StatusForbidden {
		t.Errorf("an approver deleting an override: status %d, want 403", status)
	}

	form.Set("csrf_token", match(csrfField, page))
	form.Del("confirm")
	if _, body := post(t, ac, e.srv.URL+"/grants/override/delete", form); !strings.Contains(body, `data-testid="confirm"`) {
		t.Errorf("the override's revoke did not ask first: %.300s", body)
	}
	form.Set("confirm", "yes")
	if status, body := post(t, ac, e.srv.URL+"/grants/override/delete", form); status != http.StatusOK || !strings.Contains(body, "Revoked "+id) {
		t.Errorf("the admin's confirmed revoke: status %d: %.300s", status, body)
	}
	sec, _, _ := e.st.Section()
	for _, v := range policy.DecodeSection(sec).Overrides {
		if v.ID == id {
			t.Errorf("override %s is still in the policy", id)
		}
	}
}

// TestFormTTL: an "allow for" answer's ttl_seconds comes from the form or,
// without JavaScript, from the pressed button's formaction query.
func TestFormTTL(t *testing.T) {
	cases := []struct {
		note, query, body string
		want              int
		ok                bool
	}{
		{note: "none given", want: 0, ok: true},
		{note: "from the formaction", query: "ttl_seconds=900", want: 900, ok: true},
		{note: "from the form", body: "ttl_seconds=28800", want: 28800, ok: true},
		{note: "the form wins over the query", query: "ttl_seconds=900", body: "ttl_seconds=3600", want: 3600, ok: true},
		{note: "not a number", body: "ttl_seconds=1h", ok: false},
		{note: "not positive", body: "ttl_seconds=-5", ok: false},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodPost, "/approvals/decide?"+c.query, strings.NewReader(c.body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		got, ok := formTTL(r)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%s: got %d %v, want %d %v", c.note, got, ok, c.want, c.ok)
		}
	}
}

// TestGrantOfDecision: a decision a grant made names it; the row links to
// it while it is live and says it is gone otherwise.
func TestGrantOfDecision(t *testing.T) {
	live := []grant.Grant{{ID: "g_live"}}
	cases := []struct {
		note, matched, wantID string
		wantLive              bool
	}{
		{note: "a live grant", matched: "tiered_policy:grants:grants[g_live]", wantID: "g_live", wantLive: true},
		{note: "a revoked or expired grant", matched: "tiered_policy:grants:grants[g_old]", wantID: "g_old"},
		{note: "a rule", matched: "tiered_policy:rules:rules[deploy]"},
		{note: "an override", matched: "tiered_policy:approval_overrides:approval_overrides[user_allow_x]"},
	}
	for _, c := range cases {
		id, isLive := grantOfDecision(c.matched, live)
		if id != c.wantID || isLive != c.wantLive {
			t.Errorf("%s: got %q %v, want %q %v", c.note, id, isLive, c.wantID, c.wantLive)
		}
	}
}

// TestAnsweredRowsSayTheGrant: a scoped answer under "Recent answers" says
// what it granted and until when, and names the grant for its link.
func TestAnsweredRowsSayTheGrant(t *testing.T) {
	at := time.Date(2026, 12, 4, 13, 0, 0, 0, time.UTC)
	answer := func(choice approval.Choice, g *grant.Grant) approval.Approval {
		return approval.Approval{ID: "a_" + string(choice), Status: approval.StatusAllowed, Choice: choice, DecidedBy: "ann",
			DecidedAt: &at, Grant: g, Request: approval.Request{ToolName: "bash", ToolArgs: map[string]any{"command": "make deploy"}}}
	}
	cases := []struct {
		note       string
		a          approval.Approval
		wantChoice string
		wantUntil  string
		wantGrant  string
	}{
		{note: "allow once grants nothing", a: answer(approval.ChoiceAllowOnce, nil), wantChoice: "Allowed once"},
		{note: "a session grant says until when", a: answer(approval.ChoiceAllowSession, &grant.Grant{ID: "g_s", CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour)}),
			wantChoice: "Allowed for this session", wantUntil: "2026-12-05 13:00:00 UTC", wantGrant: "g_s"},
		{note: "allow for says for how long", a: answer(approval.ChoiceAllowFor, &grant.Grant{ID: "g_t", CreatedAt: at, ExpiresAt: at.Add(15 * time.Minute)}),
			wantChoice: "Allowed for 15 min", wantUntil: "2026-12-04 13:15:00 UTC", wantGrant: "g_t"},
		{note: "allow for without its grant at hand", a: answer(approval.ChoiceAllowFor, nil), wantChoice: "Allowed for a while"},
	}
	for _, c := range cases {
		rows := answeredRows(context.Background(), []approval.Approval{c.a})
		if len(rows) != 1 {
			t.Fatalf("%s: %d rows", c.note, len(rows))
		}
		r := rows[0]
		if r.Choice != c.wantChoice || r.Until != c.wantUntil || r.GrantID != c.wantGrant {
			t.Errorf("%s: choice %q until %q grant %q, want %q %q %q", c.note, r.Choice, r.Until, r.GrantID, c.wantChoice, c.wantUntil, c.wantGrant)
		}
	}
}

// TestApprovalsPageOffersAllowForByFilter: the inbox of an approver limited
// to sessions offers no "allow for" (the service refuses it: its grant
// holds in every session), an admin's does.
func TestApprovalsPageOffersAllowForByFilter(t *testing.T) {
	m := approval.New(approval.Options{Timeout: time.Minute})
	t.Cleanup(m.Shutdown)
	req := engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make deploy"}), ChannelID: "web"}
	if _, _, err := m.Create(context.Background(), req, engine.Decision{Level: policy.Ask, MatchedRule: "tools.bash", Reason: "asks"}, "s1"); err != nil {
		t.Fatal(err)
	}
	srv, _, tokens := testServerWith(t, func(st *inforce.Holder, tokens *auth.Tokens) Deps {
		return Deps{Policy: st, Tokens: tokens, Approvals: m}
	})
	admin, _ := tokens.AdminToken()
	_, limited, _ := tokens.Create("sam", auth.RoleApprover, nil, []string{"s1"})
	cases := []struct {
		note, token string
		offered     bool
	}{
		{note: "an admin", token: admin, offered: true},
		{note: "an approver limited to s1", token: limited, offered: false},
	}
	for _, c := range cases {
		cl, _, _ := login(t, srv, c.token)
		_, page := get(t, cl, srv.URL+"/approvals")
		if !strings.Contains(page, `data-testid="approval"`) {
			t.Fatalf("%s: the ask is not on the page", c.note)
		}
		if got := strings.Contains(page, `value="allow_for"`); got != c.offered {
			t.Errorf("%s: allow for offered %v, want %v", c.note, got, c.offered)
		}
	}
}
