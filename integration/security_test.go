package integration

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gorilla/websocket"
	"gopkg.in/yaml.v3"
)

// secToken creates a token of a role through POST /api/v1/tokens.
func secToken(t *testing.T, s *Server, role string) string {
	t.Helper()
	st, body, err := relDo(s, s.Token, "POST", "/api/v1/tokens", map[string]any{"name": "sec-" + role, "role": role})
	if err != nil || st != 201 {
		t.Fatalf("create %s token: %d %s %v", role, st, body, err)
	}
	return DecodeJSON[struct {
		Secret string `json:"secret"`
	}](t, body).Secret
}

// apiRoute is one operation of openapi.yaml.
type apiRoute struct{ method, path string }

// openAPIRoutes lists every operation of the served /openapi.yaml, with
// path parameters filled in, so the matrix grows with the API.
func openAPIRoutes(t *testing.T, s *Server) []apiRoute {
	t.Helper()
	st, body, err := relDo(s, s.Token, "GET", "/openapi.yaml", nil)
	if err != nil || st != 200 {
		t.Fatalf("openapi.yaml: %d %v", st, err)
	}
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	var out []apiRoute
	for p, ops := range doc.Paths {
		for m := range ops {
			switch m {
			case "get", "post", "put", "patch", "delete":
				out = append(out, apiRoute{strings.ToUpper(m), param.ReplaceAllString(p, "zz_sec")})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path+out[i].method < out[j].path+out[j].method })
	if len(out) < 10 {
		t.Fatalf("only %d operations in openapi.yaml", len(out))
	}
	return out
}

// publicRoutes need no token.
var publicRoutes = map[string]bool{"GET /healthz": true}

// agentRoutes are the only ones an agent token may use.
// An agent may poll the approval its check opened (by its unguessable id).
var agentRoutes = map[string]bool{"GET /openapi.yaml": true, "GET /api/v1/approvals/zz_sec": true, "POST /api/v1/evaluate": true, "POST /api/v1/evaluate/batch": true, "POST /api/v1/check": true,
	"POST /api/v1/hooks/claude-code": true, "POST /api/v1/hooks/codex": true, "POST /api/v1/hooks/gemini": true}

// approverDenied reports whether an approver (read and approve, no write,
// no evaluate) must get 403.
func approverDenied(r apiRoute) bool {
	key := r.method + " " + r.path
	if key == "GET /openapi.yaml" || key == "GET /api/v1/approvals/zz_sec" {
		return false // every role may read the API description; approvers read approvals
	}
	if agentRoutes[key] {
		return true
	}
	if strings.HasPrefix(r.path, "/api/v1/tokens") || r.path == "/api/v1/permissions/preview" {
		return true
	}
	if strings.HasPrefix(r.path, "/api/v1/approvals") || strings.HasPrefix(r.path, "/api/v1/grants") {
		return false // answering asks, and listing and revoking what answers granted
	}
	switch r.method {
	case "PUT", "PATCH", "DELETE":
		return true
	case "POST":
		return r.path == "/api/v1/permissions/rules" || r.path == "/api/v1/permissions/approval-overrides"
	}
	return false
}

// TestSecurityAuthMatrix: every operation of openapi.yaml with no token, a
// wrong token, and tokens of each role.
func TestSecurityAuthMatrix(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	routes := openAPIRoutes(t, s)
	tokens := map[string]string{"approver": secToken(t, s, "approver"), "agent": secToken(t, s, "agent")}
	wrong := strings.Repeat("0", len(s.Token))
	body := func(r apiRoute) any {
		if r.method == "GET" || r.method == "DELETE" {
			return nil
		}
		return map[string]any{}
	}
	for _, r := range routes {
		key := r.method + " " + r.path
		for _, c := range []struct{ who, token string }{{"no token", ""}, {"wrong token", wrong}, {"agent", tokens["agent"]}, {"approver", tokens["approver"]}, {"admin", s.Token}} {
			st, resp, err := relDo(s, c.token, r.method, r.path, body(r))
			if err != nil {
				t.Fatalf("%s as %s: %v", key, c.who, err)
			}
			var want string
			switch {
			case publicRoutes[key]:
				want = "not 401/403"
			case c.who == "no token" || c.who == "wrong token":
				want = "401"
			case c.who == "agent" && !agentRoutes[key]:
				want = "403"
			case c.who == "approver" && approverDenied(r):
				want = "403"
			default:
				want = "not 401/403"
			}
			ok := (want == "401" && st == 401) || (want == "403" && st == 403) ||
				(want == "not 401/403" && st != 401 && st != 403)
			if st >= 500 && st != 503 {
				ok = false
			}
			if !ok {
				t.Errorf("%s as %s: got %d, want %s (%.200s)", key, c.who, st, want, resp)
			}
		}
	}
	t.Logf("%d operations x 5 callers", len(routes))
}

// TestSecurityWebsocketOrigin: /ws refuses a foreign Origin (cross-site
// websocket hijacking) even with a valid token, and accepts its own.
func TestSecurityWebsocketOrigin(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	wsURL := "ws://" + s.Addr + "/ws"
	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1.evil.example", "http://" + s.Addr + ".evil.example"} {
		h := http.Header{"Origin": {origin}, "Authorization": {"Bearer " + s.Token}}
		c, resp, err := websocket.DefaultDialer.Dial(wsURL, h)
		if err == nil {
			c.Close()
			t.Errorf("Origin %s: websocket accepted", origin)
			continue
		}
		if resp == nil || resp.StatusCode != 403 {
			t.Errorf("Origin %s: got %s, want 403", origin, wsStatus(resp, err))
		}
	}
	h := http.Header{"Origin": {s.URL}, "Authorization": {"Bearer " + s.Token}}
	c, resp, err := websocket.DefaultDialer.Dial(wsURL, h)
	if err != nil {
		t.Fatalf("own Origin: %s", wsStatus(resp, err))
	}
	c.Close()
}

// wsStatus describes a failed websocket handshake.
func wsStatus(resp *http.Response, err error) string {
	if resp == nil {
		return err.Error()
	}
	return fmt.Sprintf("%d (%v)", resp.StatusCode, err)
}

// secBrowser is a cookie-keeping client signed in to the admin pages.
type secBrowser struct {
	s      *Server
	c      *http.Client
	cookie *http.Cookie
}

func secSignIn(t *testing.T, s *Server, token string) *secBrowser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &secBrowser{s: s, c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	_, page := b.get(t, "/login")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	csrf, _ := doc.Find(`input[name="csrf_token"]`).Attr("value")
	form := url.Values{"token": {token}, "csrf_token": {csrf}}
	resp := b.post(t, "/login", form, s.URL)
	defer resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.MaxAge >= 0 && c.Value != "" {
			b.cookie = c
		}
	}
	if resp.StatusCode != 303 && resp.StatusCode != 302 || b.cookie == nil {
		t.Fatalf("sign in: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	return b
}

func (b *secBrowser) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := b.c.Get(b.s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func (b *secBrowser) post(t *testing.T, path string, form url.Values, origin string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", b.s.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// adminPages are the pages whose forms are checked.
var adminPages = []string{"/", "/tools", "/rules", "/rules/edit", "/directories", "/owners", "/overrides", "/playground", "/approvals", "/decisions", "/tokens", "/settings"}

// TestSecurityCSRFAndCookies: the session cookie is HttpOnly and
// SameSite=Strict; every POST form of every page refuses a foreign Origin
// and a missing CSRF token, and changes nothing on disk.
func TestSecurityCSRFAndCookies(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	b := secSignIn(t, s, s.Token)
	if !b.cookie.HttpOnly || b.cookie.SameSite != http.SameSiteStrictMode {
		t.Errorf("session cookie %q: HttpOnly %v SameSite %v, want HttpOnly and Strict", b.cookie.Name, b.cookie.HttpOnly, b.cookie.SameSite)
	}
	before := s.ReadFile("config.yaml")
	forms := 0
	for _, page := range adminPages {
		st, html := b.get(t, page)
		if st != 200 {
			continue
		}
		if strings.Contains(html, s.Token) {
			t.Errorf("page %s shows the admin token", page)
		}
		doc, _ := goquery.NewDocumentFromReader(strings.NewReader(html))
		doc.Find("form").Each(func(_ int, f *goquery.Selection) {
			if m, _ := f.Attr("method"); !strings.EqualFold(m, "post") {
				return
			}
			action, _ := f.Attr("action")
			if action == "" {
				action = page
			}
			form := url.Values{}
			f.Find("input[name], textarea[name], select[name]").Each(func(_ int, in *goquery.Selection) {
				n, _ := in.Attr("name")
				v, _ := in.Attr("value")
				form.Set(n, v)
			})
			forms++
			for _, c := range []struct {
				note   string
				origin string
				drop   bool
			}{{"foreign Origin", "http://evil.example", false}, {"no CSRF token", "", true}} {
				f := url.Values{}
				for k, v := range form {
					f[k] = v
				}
				if c.drop {
					f.Del("csrf_token")
					f.Del("gorilla.csrf.Token")
				}
				resp := b.post(t, action, f, c.origin)
				resp.Body.Close()
				if resp.StatusCode != 403 && resp.StatusCode != 400 {
					t.Errorf("%s form %s with %s: got %d, want 403", page, action, c.note, resp.StatusCode)
				}
			}
		})
	}
	if forms == 0 {
		t.Fatal("no POST forms found on the admin pages")
	}
	if after := s.ReadFile("config.yaml"); after != before {
		t.Errorf("a refused form changed config.yaml")
	}
	t.Logf("%d forms checked", forms)
}

// TestSecurityPathTraversal: routes that take a path or an id never serve
// a file of the config dir, whatever the encoding of "..".
func TestSecurityPathTraversal(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: "secret_marker: zzsecretzz\npermissions: {enabled: true, schema: tiered_policy}\n"})
	paths := []string{
		"/static/../api_token", "/static/../../config.yaml", "/static/%2e%2e/api_token", "/static/%2e%2e%2fapi_token",
		"/static/..%2f..%2fconfig.yaml", "/static/....//api_token", "/static/..\\api_token", "/static/%252e%252e/api_token",
		"/static//etc/passwd", "/static/%2f%2fetc%2fpasswd",
		"/api/v1/permissions/rules/..%2f..%2fapi_token", "/api/v1/permissions/rules/../../../api_token",
		"/api/v1/permissions/tools/%2e%2e", "/api/v1/permissions/tools/..%2fconfig.yaml",
		"/api/v1/tokens/..%2f..%2fapi_token", "/api/v1/permissions/approval-overrides/%2e%2e%2f%2e%2e",
		"/../../api_token", "/%2e%2e/%2e%2e/config.yaml",
	}
	passwd, _ := os.ReadFile("/etc/passwd")
	for _, p := range paths {
		for _, tok := range []string{"", s.Token} {
			req, err := http.NewRequest("GET", s.URL+"/", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Opaque = p // sent as written, not cleaned
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			resp, err := relClient.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if bytes.Contains(data, []byte(s.Token)) || bytes.Contains(data, []byte("zzsecretzz")) ||
				(len(passwd) > 0 && bytes.Contains(data, passwd[:min(len(passwd), 32)])) {
				t.Errorf("%s (token %v): served a file: %d %.200s", p, tok != "", resp.StatusCode, data)
			}
			if resp.StatusCode >= 500 {
				t.Errorf("%s: status %d", p, resp.StatusCode)
			}
		}
	}
}

// nsRun runs the binary in a fresh network namespace (only its own
// loopback exists there, so even 0.0.0.0 reaches nothing) for a second and
// returns its output.
func nsRun(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	script := fmt.Sprintf(`ip link set lo up; exec timeout -s TERM 2 %s --config-dir %s --workspace %s "$@"`, binary, dir, dir)
	cmd := exec.Command("unshare", append([]string{"-n", "sh", "-c", script, "sh"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "listening") {
		t.Fatalf("unshare -n: %v\n%s", err, out)
	}
	return string(out)
}

// TestSecurityBindAddress: by default the server listens on loopback and
// says where; told to listen on 0.0.0.0 it warns, in its log and on
// stdout. (Run in a network namespace: the machine's interfaces are never
// exposed.)
func TestSecurityBindAddress(t *testing.T) {
	out := nsRun(t)
	if !strings.Contains(out, "listening on http://127.0.0.1:8765/") || strings.Contains(out, "WARNING") {
		t.Errorf("default bind:\n%s", out)
	}
	out = nsRun(t, "--addr", "0.0.0.0:8765")
	if !strings.Contains(out, "WARNING: toolgate is listening on 0.0.0.0:8765") {
		t.Errorf("0.0.0.0 bind: no warning in\n%s", out)
	}
	if !strings.Contains(out, "listening beyond loopback") {
		t.Errorf("0.0.0.0 bind: no log warning in\n%s", out)
	}
}

// TestSecuritySecretsNotLeaked: after a run that uses the admin token and
// role tokens in headers, bodies, commands and sign-ins, no token appears in
// the server output, the pages or the decision log's SQLite files.
func TestSecuritySecretsNotLeaked(t *testing.T) {
	s := StartServer(t, ServerOptions{Args: []string{"--log-level", "debug"}})
	agent := secToken(t, s, "agent")
	approver := secToken(t, s, "approver")
	for _, tok := range []string{s.Token, agent} {
		for _, cmd := range []string{"curl -H 'Authorization: Bearer " + tok + "' https://x", "echo " + tok, "export API_TOKEN=" + tok} {
			relDo(s, tok, "POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": cmd, "token": tok}})
		}
	}
	relDo(s, "wrong"+s.Token, "GET", "/readyz", nil)
	relDo(s, s.Token, "POST", "/api/v1/commands", map[string]any{"text": "/permissions allow bash(echo " + agent + ")"})
	b := secSignIn(t, s, approver)
	for _, page := range adminPages {
		if _, html := b.get(t, page); strings.Contains(html, s.Token) || strings.Contains(html, approver) {
			t.Errorf("page %s shows a token", page)
		}
	}
	_, _, _ = relDo(s, s.Token, "GET", "/api/v1/decisions", nil)
	s.Stop()
	secrets := map[string]string{"admin": s.Token, "agent": agent, "approver": approver}
	for name, tok := range secrets {
		if strings.Contains(s.Output(), tok) {
			t.Errorf("the %s token is in the server output", name)
		}
	}
	files, _ := filepath.Glob(filepath.Join(s.ConfigDir, "*.db*"))
	if len(files) == 0 {
		t.Errorf("no decision log files to check in %s", s.ConfigDir)
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for name, tok := range secrets {
			if i := bytes.Index(data, []byte(tok)); i >= 0 {
				t.Errorf("the %s token is in %s: %q", name, filepath.Base(f), data[max(0, i-20):min(len(data), i+len(tok)+10)])
			}
		}
	}
}
