package service_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/web"
)

// doors is one server with both front doors, REST and the pages, over a
// real store and token set, sharing one policy service as the server does.
type doors struct {
	srv    *httptest.Server
	st     *inforce.Holder
	tokens *auth.Tokens
}

func newDoors(t *testing.T) *doors {
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
	edits := service.NewPolicy(st)
	ui := web.New(web.Deps{Policy: st, Edits: edits, Tokens: tokens})
	r := chi.NewRouter()
	api.New(api.Deps{Policy: st, Edits: edits, Tokens: tokens, Sessions: ui.Sessions()}).Mount(r)
	ui.Mount(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return &doors{srv: srv, st: st, tokens: tokens}
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]*)"`)

func find(re *regexp.Regexp, s string) string {
	if m := re.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// browser signs in to the pages with token; redirects are not followed.
func (d *doors) browser(t *testing.T, token string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(d.srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp, err = c.PostForm(d.srv.URL+"/login", url.Values{"csrf_token": {find(csrfRE, string(page))}, "token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return c
}

// page GETs a page, or POSTs form to it with the session's CSRF token and
// the ETag of the page it was rendered on.
func (d *doors) page(t *testing.T, c *http.Client, method, path string, form url.Values) (int, string) {
	t.Helper()
	resp, err := c.Get(d.srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	home, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if method == http.MethodGet {
		resp, err = c.Get(d.srv.URL + path)
	} else {
		form.Set("csrf_token", find(csrfRE, string(home)))
		if form.Get("etag") == "" {
			_, etag, _ := d.st.Section()
			form.Set("etag", etag)
		}
		resp, err = c.PostForm(d.srv.URL+path, form)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// rest calls the API with a bearer token.
func (d *doors) rest(t *testing.T, token, method, path string, body any) (int, []byte) {
	t.Helper()
	return d.restIfMatch(t, token, method, path, body, "")
}

// restIfMatch is rest with an If-Match header (none when empty).
func (d *doors) restIfMatch(t *testing.T, token, method, path string, body any, ifMatch string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestRoleChecksAgreeAcrossDoors: for each role that may use the pages,
// each thing that both doors offer is allowed through the page exactly when
// it is allowed over REST. (Before the one role table, an approver could
// list every token on the tokens page while GET /api/v1/tokens refused.)
func TestRoleChecksAgreeAcrossDoors(t *testing.T) {
	d := newDoors(t)
	admin, _ := d.tokens.AdminToken()
	_, approver, _ := d.tokens.Create("ann", auth.RoleApprover, nil, nil)
	actions := []struct {
		note       string
		pageMethod string
		pagePath   string
		pageForm   url.Values
		restMethod string
		restPath   string
		restBody   any
	}{
		{note: "list tokens", pageMethod: "GET", pagePath: "/tokens", restMethod: "GET", restPath: "/api/v1/tokens"},
		{note: "read rules", pageMethod: "GET", pagePath: "/rules", restMethod: "GET", restPath: "/api/v1/permissions/rules"},
		{note: "set a tool level", pageMethod: "POST", pagePath: "/tools", pageForm: url.Values{"tool": {"grep"}, "level": {"allow"}},
			restMethod: "PUT", restPath: "/api/v1/permissions/tools/grep", restBody: map[string]string{"level": "allow"}},
		{note: "create a token", pageMethod: "POST", pagePath: "/tokens", pageForm: url.Values{"name": {"x"}, "role": {"agent"}},
			restMethod: "POST", restPath: "/api/v1/tokens", restBody: map[string]string{"name": "y", "role": "agent"}},
	}
	for _, role := range []struct{ name, token string }{{"admin", admin}, {"approver", approver}} {
		c := d.browser(t, role.token)
		for _, a := range actions {
			pageStatus, _ := d.page(t, c, a.pageMethod, a.pagePath, a.pageForm)
			restStatus, body := d.rest(t, role.token, a.restMethod, a.restPath, a.restBody)
			pageOK, restOK := pageStatus != http.StatusForbidden, restStatus != http.StatusForbidden
			if pageOK != restOK {
				t.Errorf("%s, %s: the page answers %d, REST %d %s: the doors disagree", role.name, a.note, pageStatus, restStatus, body)
			}
		}
	}
}

// TestNewRuleIDsAgreeAcrossDoors: a rule saved without an id gets the same
// id whether it was typed on the rules page or posted to the API (before,
// three generators: the page's rule_<tool>_<pattern>, the API's random
// rule_<hex>, the store's own for always-allow).
func TestNewRuleIDsAgreeAcrossDoors(t *testing.T) {
	viaPage, viaREST := newDoors(t), newDoors(t)
	admin, _ := viaPage.tokens.AdminToken()
	c := viaPage.browser(t, admin)
	if st, body := viaPage.page(t, c, "POST", "/rules", url.Values{"tools": {"bash"}, "pattern": {"git status *"}, "action": {"allow"}}); st != http.StatusSeeOther {
		t.Fatalf("page: %d %s", st, body)
	}
	admin2, _ := viaREST.tokens.AdminToken()
	st, body := viaREST.rest(t, admin2, "POST", "/api/v1/permissions/rules", map[string]any{"tools": []string{"bash"}, "pattern": "git status *", "action": "allow"})
	if st != http.StatusCreated {
		t.Fatalf("REST: %d %s", st, body)
	}
	var created map[string]any
	_ = json.Unmarshal(body, &created)
	pageSec, _, _ := viaPage.st.Section()
	rules, _ := pageSec["rules"].([]any)
	var pageID any
	for _, r := range rules {
		if m, _ := r.(map[string]any); m["pattern"] == "git status *" {
			pageID = m["id"]
		}
	}
	if pageID == nil || pageID != created["id"] {
		t.Errorf("the page made id %v, the API %v: want the same", pageID, created["id"])
	}
	if want := service.NewID(service.PrefixRule, []string{"bash"}, "git status *", nil); created["id"] != want {
		t.Errorf("id %v, want %s", created["id"], want)
	}
}

// TestRESTWritesHonourIfMatch: every write route refuses a stale If-Match
// with 412 and writes nothing; the current ETag passes.
func TestRESTWritesHonourIfMatch(t *testing.T) {
	d := newDoors(t)
	admin, _ := d.tokens.AdminToken()
	_, stale, _ := d.st.Section()
	if _, err := d.st.SetToolLevel("grep", "ask"); err != nil {
		t.Fatal(err)
	}
	writes := []struct {
		note, method, path string
		body               any
	}{
		{note: "tool level", method: "PUT", path: "/api/v1/permissions/tools/bash", body: map[string]string{"level": "deny"}},
		{note: "settings", method: "PATCH", path: "/api/v1/permissions/settings", body: map[string]any{"permission_mode": "strict"}},
		{note: "new rule", method: "POST", path: "/api/v1/permissions/rules", body: map[string]any{"tools": []string{"bash"}, "pattern": "ls *", "action": "allow"}},
		{note: "external directory", method: "PUT", path: "/api/v1/permissions/external-directory", body: map[string]string{"key": "/srv", "level": "allow"}},
		{note: "delete tool", method: "DELETE", path: "/api/v1/permissions/tools/grep"},
	}
	for _, w := range writes {
		before, etag, _ := d.st.Section()
		status, body := d.restIfMatch(t, admin, w.method, w.path, w.body, `"`+stale+`"`)
		after, _, _ := d.st.Section()
		if status != http.StatusPreconditionFailed {
			t.Errorf("%s with a stale If-Match: got %d %s, want 412", w.note, status, body)
		}
		if _, now, _ := d.st.Section(); now != etag {
			t.Errorf("%s with a stale If-Match changed the section: %v -> %v", w.note, before, after)
		}
		if status, body := d.restIfMatch(t, admin, w.method, w.path, w.body, `"`+etag+`"`); status >= 300 {
			t.Errorf("%s with the current If-Match: got %d %s", w.note, status, body)
		}
	}
}

// TestIfMatchCheckedUnderTheStoresLock: an edit of config.yaml made outside
// this process (by hand, another replica), not yet loaded, still makes a
// stale If-Match fail: the ETag is checked on the document as read under
// the store's lock, not only on the policy in memory.
func TestIfMatchCheckedUnderTheStoresLock(t *testing.T) {
	d := newDoors(t)
	pol := service.NewPolicy(d.st)
	_, etag, _ := d.st.Section()
	path := filepath.Join(d.st.Dir(), store.ConfigFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(raw), "permissions:", "permissions:\n  deny_guidance_message: edited by hand", 1)
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := pol.SetToolLevel(etag, "bash", "deny"); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Errorf("an edit with the ETag from before the hand edit: got %v, want ErrPreconditionFailed", err)
	}
	after, _ := os.ReadFile(path)
	if !strings.Contains(string(after), "edited by hand") {
		t.Errorf("the hand edit is gone:\n%s", after)
	}
}

// TestExportIsThePermissionsSectionAlone: GET /api/v1/permissions/export
// answers config.yaml's permissions entry as a document of its own: the
// key at the top level, its comments kept, every other key left out.
func TestExportIsThePermissionsSectionAlone(t *testing.T) {
	d := newDoors(t)
	path := filepath.Join(d.st.Dir(), store.ConfigFile)
	config := "# the team's config\nmodel: gpt\n\n# who may run what\npermissions:\n  enabled: true\n  tools:\n    bash: ask # think first\n  # rules below\n  rules: []\nother:\n  key: 1\n"
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.st.Reload(); err != nil {
		t.Fatal(err)
	}
	admin, _ := d.tokens.AdminToken()
	status, body := d.rest(t, admin, "GET", "/api/v1/permissions/export", nil)
	text := string(body)
	if status != http.StatusOK {
		t.Fatalf("export: %d %s", status, body)
	}
	for _, want := range []string{"permissions:\n", "# who may run what", "bash: ask # think first", "# rules below"} {
		if !strings.Contains(text, want) {
			t.Errorf("export lacks %q:\n%s", want, text)
		}
	}
	for _, not := range []string{"model:", "other:", "the team's config"} {
		if strings.Contains(text, not) {
			t.Errorf("export holds %q, which is outside the permissions section:\n%s", not, text)
		}
	}
	var doc map[string]any
	if err := yaml.Unmarshal(body, &doc); err != nil || len(doc) != 1 || doc["permissions"] == nil {
		t.Errorf("export is not a document with permissions alone at the top: %v %v", doc, err)
	}
}
