package integration

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserAdmin drives the admin pages in headless Chromium against the
// real binary: log in, add, edit and delete a rule (seen in the table and
// in config.yaml), test a rule, change a tool level, trust a directory,
// see its overrides, decide a call in the playground, and log out.
func TestBrowserAdmin(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	ctx := newBrowser(t)
	config := func() string { return s.ReadFile("config.yaml") }

	run(t, ctx, "open login", chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(tid("login-form")))
	screenshot(t, ctx, "01-login")
	run(t, ctx, "log in",
		chromedp.SendKeys(tid("token"), s.Token),
		chromedp.Click(tid("login-submit")),
		chromedp.WaitVisible(tid("severity-table")))
	if got := textOf(t, ctx, tid("mode")); got != "normal" {
		t.Errorf("overview mode: got %q, want normal", got)
	}
	screenshot(t, ctx, "02-overview")

	// Add a rule; the pattern is checked as it is typed.
	run(t, ctx, "add rule",
		chromedp.Navigate(s.URL+"/rules"),
		chromedp.WaitVisible(tid("rule-form")),
		chromedp.SendKeys(tid("rule-tools"), "bash"),
		chromedp.SendKeys(tid("rule-pattern-input"), "re:(["))
	WaitFor(t, 5*time.Second, "the bad pattern to be flagged", func() bool {
		return strings.Contains(textOf(t, ctx, tid("pattern-check")), "does not compile")
	})
	clearInput(t, ctx, "rule-pattern-input")
	run(t, ctx, "fix pattern",
		chromedp.SendKeys(tid("rule-pattern-input"), "git status *"))
	WaitFor(t, 5*time.Second, "the pattern to be accepted", func() bool {
		return textOf(t, ctx, tid("pattern-check")) == "Pattern OK."
	})
	run(t, ctx, "submit rule",
		chromedp.SetValue(tid("rule-action-select"), "allow"),
		chromedp.SendKeys(tid("rule-description"), "status is harmless"),
		chromedp.Click(tid("rule-add")),
		chromedp.WaitVisible(tid("rules-table")))
	if got := textOf(t, ctx, tid("flash")); !strings.Contains(got, "Added rule") {
		t.Errorf("flash after add: got %q", got)
	}
	// The new row is the page's target: scrolled into view and highlighted.
	waitJS(t, ctx, "the new rule's row to be the target", `(document.querySelector(":target") || {dataset: {}}).dataset.testid === "rule-row"`)
	if got := textOf(t, ctx, tid("rule-pattern")); got != "git status *" {
		t.Errorf("rule table pattern: got %q, want git status *", got)
	}
	if c := config(); !strings.Contains(c, "pattern: git status *") || !strings.Contains(c, "status is harmless") {
		t.Errorf("config.yaml lacks the new rule:\n%s", c)
	}

	// The "test this rule" box.
	run(t, ctx, "test a rule",
		chromedp.SendKeys(tid("test-tools"), "bash"),
		chromedp.SendKeys(tid("test-pattern"), "ls *"),
		chromedp.SetValue(tid("test-action"), "allow"),
		chromedp.SendKeys(tid("test-samples"), "ls -la\nrm -rf x"),
		chromedp.Click(tid("test-run")),
		chromedp.WaitVisible(tid("test-results")))
	matched, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('[data-testid="test-result"]')).map(e => e.dataset.matched)`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(matched, ",") != "true,false" {
		t.Errorf("test results matched: got %v, want [true false]", matched)
	}
	screenshot(t, ctx, "03-rules")

	// Edit the rule.
	run(t, ctx, "edit rule",
		chromedp.Click(tid("rule-edit")),
		chromedp.WaitVisible(tid("rule-save")),
		chromedp.SetValue(tid("rule-pattern-input"), "git log *"),
		chromedp.Click(tid("rule-save")),
		chromedp.WaitVisible(tid("flash")))
	if got := textOf(t, ctx, tid("rule-pattern")); got != "git log *" {
		t.Errorf("edited pattern: got %q, want git log *", got)
	}
	if c := config(); !strings.Contains(c, "pattern: git log *") || strings.Contains(c, "pattern: git status *") {
		t.Errorf("config.yaml after edit:\n%s", c)
	}

	// Delete it.
	run(t, ctx, "delete rule",
		chromedp.Click(tid("rule-delete")),
		chromedp.WaitVisible(tid("confirm")))
	if c := config(); !strings.Contains(c, "pattern: git log *") {
		t.Errorf("the rule went before the delete was confirmed:\n%s", c)
	}
	screenshot(t, ctx, "03b-confirm-delete")
	run(t, ctx, "confirm the delete",
		chromedp.Click(tid("confirm-yes")),
		chromedp.WaitVisible(tid("no-rules")))
	if c := config(); strings.Contains(c, "pattern: git log *") {
		t.Errorf("config.yaml still has the deleted rule:\n%s", c)
	}

	// Change a tool level.
	row := chromedp.CSS(`[data-testid="tool-write_file"] `)
	run(t, ctx, "set tool level",
		chromedp.Navigate(s.URL+"/tools"),
		chromedp.WaitVisible(tid("tools-table")),
		chromedp.SetValue(row+tid("tool-select"), "deny"),
		chromedp.SetValue(chromedp.CSS(`[data-testid="tool-create_terminal"] `)+tid("tool-select"), "deny"),
		chromedp.Click(tid("tools-save")),
		chromedp.WaitVisible(tid("flash")))
	if got := strings.TrimSpace(textOf(t, ctx, row+tid("tool-level"))); got != "deny" {
		t.Errorf("write_file level: got %q, want deny", got)
	}
	if c := config(); !strings.Contains(c, "write_file: deny") || !strings.Contains(c, "create_terminal: deny") {
		t.Errorf("one Save should write both levels; config.yaml lacks write_file: deny or create_terminal: deny:\n%s", c)
	}
	screenshot(t, ctx, "04-tools")

	// Trust a directory: /add-dir, showing the overrides it creates.
	trusted := filepath.Join(filepath.Dir(s.Workspace), "shared")
	run(t, ctx, "trust directory",
		chromedp.Navigate(s.URL+"/directories"),
		chromedp.WaitVisible(tid("trust-form")),
		chromedp.SendKeys(tid("trust-path"), trusted),
		chromedp.Click(tid("trust-submit")),
		chromedp.WaitVisible(tid("confirm-points")))
	if got := textOf(t, ctx, tid("confirm-points")); !strings.Contains(got, "cli_trusted_path_") || !strings.Contains(got, "cli_trusted_shell_") {
		t.Errorf("the trust confirmation does not spell out the two overrides: %q", got)
	}
	run(t, ctx, "confirm the trust",
		chromedp.Click(tid("confirm-yes")),
		chromedp.WaitVisible(tid("trusted-result")))
	if got := textOf(t, ctx, tid("trusted-overrides")); !strings.Contains(got, "cli_trusted_path_") || !strings.Contains(got, "cli_trusted_shell_") {
		t.Errorf("trusted overrides shown: %q", got)
	}
	if got := textOf(t, ctx, tid("dirs-table")); !strings.Contains(got, trusted) {
		t.Errorf("directories table lacks %s: %q", trusted, got)
	}
	if c := config(); !strings.Contains(c, "cli_trusted_path_") {
		t.Errorf("config.yaml lacks the trusted directory overrides:\n%s", c)
	}
	screenshot(t, ctx, "05-directories")

	run(t, ctx, "overrides", chromedp.Navigate(s.URL+"/overrides"), chromedp.WaitVisible(tid("overrides-table")))
	if got := textOf(t, ctx, tid("override-source")); got != "cli_add_dir" {
		t.Errorf("override source: got %q, want cli_add_dir", got)
	}
	screenshot(t, ctx, "06-overrides")

	// The playground: a read of the trusted directory is allowed by its override.
	run(t, ctx, "playground",
		chromedp.Navigate(s.URL+"/playground"),
		chromedp.WaitVisible(tid("play-form")),
		chromedp.SetValue(tid("play-tool"), "bash"),
		chromedp.SendKeys(tid("play-command"), "cat "+trusted+"/notes.txt"),
		chromedp.Click(tid("play-submit")),
		chromedp.WaitVisible(tid("decisive-step")))
	if got := textOf(t, ctx, tid("decisive-step")); !strings.Contains(got, "approval_overrides") {
		t.Errorf("decisive step: got %q, want the approval_overrides step", got)
	}
	if got := textOf(t, ctx, tid("play-rule")); !strings.Contains(got, "cli_trusted_shell_") {
		t.Errorf("matched rule: got %q", got)
	}
	screenshot(t, ctx, "07-playground")

	run(t, ctx, "approvals", chromedp.Navigate(s.URL+"/approvals"), chromedp.WaitReady(chromedp.CSS("main")))
	screenshot(t, ctx, "08-approvals")

	run(t, ctx, "log out",
		chromedp.Click(tid("logout")),
		chromedp.WaitVisible(tid("login-form")),
		chromedp.Navigate(s.URL+"/tools"),
		chromedp.WaitVisible(tid("login-form")))
}

// webClient is a browser-like HTTP client signed in to the admin pages.
type webClient struct {
	t    *testing.T
	s    *Server
	http *http.Client
}

var hiddenField = regexp.MustCompile(`name="(csrf_token|etag)" value="([^"]*)"`)

// fields reads the first csrf_token and etag hidden fields of a page.
func fields(page string) map[string]string {
	out := map[string]string{}
	for _, m := range hiddenField.FindAllStringSubmatch(page, -1) {
		if _, ok := out[m[1]]; !ok {
			out[m[1]] = m[2]
		}
	}
	return out
}

// signIn logs in with the admin token as a form post from the same origin.
func signIn(t *testing.T, s *Server) *webClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &webClient{t: t, s: s, http: &http.Client{Jar: jar}}
	_, page := c.get("/login")
	f := fields(page)
	status, _ := c.post("/login", url.Values{"csrf_token": {f["csrf_token"]}, "token": {s.Token}}, s.URL)
	if status != http.StatusOK {
		t.Fatalf("login: status %d", status)
	}
	return c
}

func (c *webClient) get(path string) (int, string) {
	c.t.Helper()
	resp, err := c.http.Get(c.s.URL + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = ioCopy(&b, resp)
	return resp.StatusCode, b.String()
}

// post sends a form with an Origin header ("" for none).
func (c *webClient) post(path string, form url.Values, origin string) (int, string) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.s.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = ioCopy(&b, resp)
	return resp.StatusCode, b.String()
}

// TestBrowserCSRF checks that a cross-site form post is refused: a foreign
// Origin with a valid token, or the right origin without the token, changes
// nothing; and a stale form gets the conflict page.
func TestBrowserCSRF(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	c := signIn(t, s)
	_, page := c.get("/tools")
	f := fields(page)
	before := s.ReadFile("config.yaml")
	form := url.Values{"csrf_token": {f["csrf_token"]}, "etag": {f["etag"]}, "tool": {"bash"}, "level": {"allow"}}

	cases := []struct {
		note   string
		form   url.Values
		origin string
	}{
		{note: "foreign origin with a valid token", form: form, origin: "http://evil.example"},
		{note: "same origin without the token", form: url.Values{"etag": {f["etag"]}, "tool": {"bash"}, "level": {"allow"}}, origin: s.URL},
		{note: "same origin with a wrong token", form: url.Values{"csrf_token": {"x"}, "etag": {f["etag"]}, "tool": {"bash"}, "level": {"allow"}}, origin: s.URL},
	}
	for _, tc := range cases {
		if status, _ := c.post("/tools", tc.form, tc.origin); status != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", tc.note, status)
		}
	}
	if status, _ := c.post("/logout", url.Values{}, "http://evil.example"); status != http.StatusForbidden {
		t.Errorf("cross-site logout: status %d, want 403", status)
	}
	if after := s.ReadFile("config.yaml"); after != before {
		t.Errorf("config.yaml changed by a refused post:\n%s", after)
	}

	// A form rendered before someone else's change is refused with 409.
	edited := strings.Replace(before, "bash: ask", "bash: deny", 1)
	if err := os.WriteFile(filepath.Join(s.ConfigDir, "config.yaml"), []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 5*time.Second, "the hand edit to be picked up", func() bool {
		_, p := c.get("/tools")
		return fields(p)["etag"] != f["etag"]
	})
	status, body := c.post("/tools", form, s.URL)
	if status != http.StatusConflict || !strings.Contains(body, `data-testid="conflict"`) {
		t.Errorf("stale form: status %d, want 409 with the conflict page", status)
	}
	if !regexp.MustCompile(`<td data-label="Field">level</td><td data-label="You typed"><code class="id" data-testid="typed-value">allow</code></td><td data-label="Now in the policy"><code class="id">deny</code>`).MatchString(body) {
		t.Errorf("the conflict page does not show the typed level beside the current one:\n%s", body)
	}
	if !strings.Contains(s.ReadFile("config.yaml"), "bash: deny") {
		t.Errorf("the stale form overwrote the hand edit")
	}

	// A fresh form goes through.
	_, page = c.get("/tools")
	f = fields(page)
	form.Set("etag", f["etag"])
	if status, _ := c.post("/tools", form, s.URL); status != http.StatusOK {
		t.Errorf("fresh form: status %d, want 200 after the redirect", status)
	}
	if !strings.Contains(s.ReadFile("config.yaml"), "bash: allow") {
		t.Errorf("config.yaml lacks bash: allow after a fresh form")
	}
}
