package web

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store/auth"
)

// testServer serves the pages over a real store and token set in a temp dir.
func testServer(t *testing.T) (*httptest.Server, *inforce.Holder, *auth.Tokens) {
	t.Helper()
	return testServerWith(t, nil)
}

// testServerWith is testServer with the pages' Deps made by deps from the
// store and tokens (nil: the store as the policy and the tokens, as
// testServer does).
func testServerWith(t *testing.T, deps func(*inforce.Holder, *auth.Tokens) Deps) (*httptest.Server, *inforce.Holder, *auth.Tokens) {
	t.Helper()
	dir := t.TempDir()
	st, err := inforce.Open(dir, inforce.Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tokens, _, err := auth.OpenTokens(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := Deps{Policy: st, Tokens: tokens}
	if deps != nil {
		d = deps(st, tokens)
	}
	r := chi.NewRouter()
	New(d).Mount(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv, st, tokens
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]*)"`)

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func post(t *testing.T, c *http.Client, u string, form url.Values) (int, string) {
	t.Helper()
	resp, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func match(re *regexp.Regexp, s string) string {
	if m := re.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// login signs in with a token and returns the client and the status.
func login(t *testing.T, srv *httptest.Server, token string) (*http.Client, int, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	_, page := get(t, c, srv.URL+"/login")
	status, body := post(t, c, srv.URL+"/login", url.Values{"csrf_token": {match(csrfField, page)}, "token": {token}})
	return c, status, body
}

func TestLoginRoles(t *testing.T) {
	srv, _, tokens := testServer(t)
	admin, _ := tokens.AdminToken()
	_, agent, _ := tokens.Create("bot", auth.RoleAgent, nil, nil)
	cases := []struct {
		note   string
		token  string
		status int
	}{
		{note: "admin signs in", token: admin, status: http.StatusOK},
		{note: "an agent may not sign in", token: agent, status: http.StatusForbidden},
		{note: "an unknown token is refused", token: "nope", status: http.StatusUnauthorized},
	}
	for _, tc := range cases {
		if _, status, _ := login(t, srv, tc.token); status != tc.status {
			t.Errorf("%s: status %d, want %d", tc.note, status, tc.status)
		}
	}
	// Without the login form's token, even a good token is refused.
	c := &http.Client{}
	if status, _ := post(t, c, srv.URL+"/login", url.Values{"token": {admin}}); status != http.StatusForbidden {
		t.Errorf("login without the form token: status %d, want 403", status)
	}
}

func TestApproverIsReadOnly(t *testing.T) {
	srv, st, tokens := testServer(t)
	_, tok, _ := tokens.Create("ann", auth.RoleApprover, nil, nil)
	c, status, _ := login(t, srv, tok)
	if status != http.StatusOK {
		t.Fatalf("approver login: status %d", status)
	}
	_, page := get(t, c, srv.URL+"/tools")
	if strings.Contains(page, `action="/tools"`) {
		t.Errorf("the tools page renders an edit form for an approver")
	}
	_, etag, _ := st.Section()
	before, _, _ := st.Section()
	status, _ = post(t, c, srv.URL+"/tools", url.Values{"csrf_token": {match(csrfField, page)}, "etag": {etag}, "tool": {"bash"}, "level": {"allow"}})
	if status != http.StatusForbidden {
		t.Errorf("approver POST /tools: status %d, want 403", status)
	}
	if after, _, _ := st.Section(); asMap(after["tools"])["bash"] != asMap(before["tools"])["bash"] {
		t.Errorf("an approver changed a tool level")
	}
}

func TestSessions(t *testing.T) {
	s := NewSessions(0)
	p := auth.Principal{Name: "ann", Role: auth.RoleApprover, Channels: []string{"web"}}
	id := s.Create(p)
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.AddCookie(&http.Cookie{Name: SessionCookie, Value: id})
	if got, ok := s.SessionPrincipal(req); !ok || got.Name != "ann" {
		t.Errorf("SessionPrincipal: got %+v %v", got, ok)
	}
	hp, ok := s.HubAuth().Authenticate(req)
	if !ok || hp.Role != auth.RoleApprover || hp.Bearer || len(hp.Channels) != 1 || hp.Valid == nil || !hp.Valid() {
		t.Errorf("HubAuth: got %+v %v", hp, ok)
	}
	se, _, _ := s.lookup(req)
	if !s.CheckCSRF(id, se.csrf) || s.CheckCSRF(id, "wrong") || s.CheckCSRF(id, "") {
		t.Errorf("CheckCSRF accepts the wrong token or refuses the right one")
	}
	signedOut := 0
	s.OnSignOut(func() { signedOut++ })
	s.Delete(id)
	if _, ok := s.SessionPrincipal(req); ok {
		t.Errorf("a deleted session still authenticates")
	}
	if hp.Valid() || signedOut != 1 {
		t.Errorf("after sign-out: the hub principal is valid %v, sign-out hook called %d times; want false, 1", hp.Valid(), signedOut)
	}
	expired := NewSessions(0)
	id = expired.Create(p)
	expired.now = func() time.Time { return time.Now().Add(DefaultSessionTTL + time.Minute) }
	req = httptest.NewRequest(http.MethodGet, "/", nil)
	req.AddCookie(&http.Cookie{Name: SessionCookie, Value: id})
	if _, ok := expired.SessionPrincipal(req); ok {
		t.Errorf("an expired session still authenticates")
	}
}

// TestSessionEndsWithItsToken: revoking the token a session signed in with
// ends the session at once.
func TestSessionEndsWithItsToken(t *testing.T) {
	s := NewSessions(time.Hour)
	revoked := false
	s.EndWithToken(func(id string) bool { return !(revoked && id == "tok_1") })
	id := s.Create(auth.Principal{TokenID: "tok_1", Name: "alice", Role: auth.RoleApprover})
	req := httptest.NewRequest("GET", "/", nil)
	req.AddCookie(&http.Cookie{Name: SessionCookie, Value: id})
	if _, ok := s.SessionPrincipal(req); !ok {
		t.Fatal("a fresh session is not valid")
	}
	revoked = true
	if _, ok := s.SessionPrincipal(req); ok {
		t.Error("the session still works after its token was revoked")
	}
}

// TestCheckRule: the as-you-type check reports the engine's problems.
func TestCheckRule(t *testing.T) {
	cases := []struct {
		note, tools, pattern, matchType, want string
	}{
		{"fine", "bash", "git status *", "", ""},
		{"bad regex", "bash", "re:(", "", "does not compile"},
		{"mixed categories", "bash, read_file", "x", "", "mixes shell and path"},
		{"unknown tool", "my_tool", "x", "", "unknown tool"},
		{"network", "mcp_fetch_webpage", "x", "", "never match"},
		{"no tool", "", "x", "", "at least one tool"},
		{"a network args rule matches", "mcp_fetch_webpage", `*"url":"https://example.com/*`, "args", ""},
		{"an MCP server's every tool", "mcp__fs__*", "/srv/**", "", ""},
		{"an MCP wildcard inside the tool part", "mcp__fs__read_*", "/srv/**", "", "only a whole tool part * is a wildcard"},
		{"an MCP name without a tool", "mcp__fs", "/srv/**", "", "write mcp__SERVER__TOOL"},
	}
	for _, c := range cases {
		got := checkRule(policy.SplitTools(c.tools), c.pattern, c.matchType, english)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want it to say %q", c.note, got, c.want)
		}
	}
}

// asMap reads a decoded YAML or JSON mapping (nil when v is not one).
func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
