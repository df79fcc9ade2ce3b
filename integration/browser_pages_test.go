package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// pagesDir holds the screenshots of every page at both sizes, committed
// and referenced from the README (the other browser tests' screenshots in
// screenshotDir are not).
var pagesDir = filepath.Join(screenshotDir, "pages")

// sitePage is one admin page the layout tests visit.
type sitePage struct {
	name, path string
	// ready is the data-testid that shows the page has rendered.
	ready string
}

// seedPages gives every page something to show: a user rule with an ask,
// a trusted directory with its overrides, two pending asks (one with a long
// command), a session grant, and logged decisions.
func seedPages(t *testing.T, s *Server) {
	t.Helper()
	rule := map[string]any{"id": "ask_make_deploy_to_production_servers", "tools": []string{"bash"}, "pattern": "make deploy*",
		"action": "ask", "description": "deploys need a person"}
	if st, _, body := s.Call(s.Token, "POST", "/api/v1/permissions/rules", rule, nil); st != 201 && st != 200 {
		t.Fatalf("add the ask rule: %d %s", st, body)
	}
	shared := filepath.Join(filepath.Dir(s.Workspace), "a-rather-long-shared-directory-name", "with", "nested", "folders")
	if st, _, body := s.Call(s.Token, "POST", "/api/v1/commands", map[string]any{"text": "/add-dir " + shared}, nil); st != 200 {
		t.Fatalf("add-dir: %d %s", st, body)
	}
	owners := map[string]any{"owner_scopes": map[string]any{"feishu": map[string]any{"ou_7d8a6e6df7621556": map[string]any{
		"tools":    map[string]any{"bash": map[string]any{"patterns": map[string]any{"git status *": "allow"}, "*": "deny"}, "read_file": "allow"},
		"defaults": map[string]any{"*": "deny"}}}}}
	if st, _, body := s.Call(s.Token, "PUT", "/api/v1/permissions/owner-scopes", owners, nil); st != 200 {
		t.Fatalf("owner scopes: %d %s", st, body)
	}
	agent := createToken(t, s, "agent-runtime", "agent")
	for _, cmd := range []string{"ls -la", "git status", "rm -rf /tmp/some/where/very/deep/inside/a/tree/that/never/ends"} {
		s.Call(agent, "POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": cmd}}, nil)
	}
	// Two asks stay pending (wait_seconds 0 answers "pending" at once).
	for _, cmd := range []string{"make deploy-prod --target=/srv/releases/app-2026-12-02T03:15:20Z-build-0000000000000042",
		"make deploy-staging"} {
		st, _, body := s.Call(agent, "POST", "/api/v1/check", map[string]any{"tool_name": "bash",
			"tool_args": map[string]any{"command": cmd}, "channel_id": "web", "session_id": "agent-1", "wait_seconds": 0}, nil)
		if st != 200 {
			t.Fatalf("check: %d %s", st, body)
		}
	}
	// A third, answered "allow for this session", leaves a grant for the
	// Grants page.
	st, _, body := s.Call(agent, "POST", "/api/v1/check", map[string]any{"tool_name": "bash",
		"tool_args":  map[string]any{"command": "make deploy-preview --branch=feature/a-rather-long-branch-name-for-the-grants-page"},
		"channel_id": "web", "session_id": "agent-1", "wait_seconds": 0}, nil)
	if st != 200 {
		t.Fatalf("check: %d %s", st, body)
	}
	asked := DecodeJSON[checkAnswer](t, body)
	if asked.Approval == nil {
		t.Fatalf("the third check did not ask: %s", body)
	}
	if st, _, body := s.Call(s.Token, "POST", "/api/v1/approvals/"+asked.Approval.ID+"/decision", map[string]any{"choice": "allow_session"}, nil); st != 200 {
		t.Fatalf("allow for the session: %d %s", st, body)
	}
}

// allPages are the signed-in pages, with the testid each waits for.
var allPages = []sitePage{
	{"overview", "/", "severity-table"},
	{"tools", "/tools", "tools-table"},
	{"rules", "/rules", "rules-table"},
	{"rule-edit", "/rules/edit?id=ask_make_deploy_to_production_servers", "rule-form"},
	{"directories", "/directories", "dirs-table"},
	{"owners", "/owners", "owners-table"},
	{"overrides", "/overrides", "overrides-table"},
	{"playground", "/playground?tool=bash&command=" + "cat%20%2Fetc%2Fhosts", "play-form"},
	{"approvals", "/approvals", "approval"},
	{"grants", "/grants", "grants-table"},
	{"decisions", "/decisions", "decisions-table"},
	{"tokens", "/tokens", "tokens-table"},
	{"not-found", "/no/such/page", "not-found"},
}

// login signs the browser in with a token.
func login(t *testing.T, ctx context.Context, s *Server, token string) {
	t.Helper()
	run(t, ctx, "log in",
		chromedp.Navigate(s.URL+"/login"),
		chromedp.WaitVisible(tid("login-form")),
		chromedp.SendKeys(tid("token"), token),
		chromedp.Click(tid("login-submit")),
		// Ready, not visible: on a phone the name is in the folded menu.
		chromedp.WaitReady(tid("user")))
}

// overflowing names the elements that reach past the window's right edge,
// to say what made a page too wide.
const overflowing = `Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5).slice(0, 8).map(e => e.tagName + "." + e.className + "[" + (e.dataset.testid||"") + "] " + Math.round(e.getBoundingClientRect().right)).join(", ")`

// TestBrowserPagesLayout visits every page at 390×844 (a phone) and
// 1280×900: no page may scroll sideways on the phone, and each is
// screenshotted at both sizes into integration/screenshots/pages.
func TestBrowserPagesLayout(t *testing.T) {
	s := StartServer(t, ServerOptions{Args: []string{"--log-full-args"}})
	seedPages(t, s)
	ctx := newBrowser(t)
	if err := os.MkdirAll(pagesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "phone size", chromedp.EmulateViewport(390, 844))
	run(t, ctx, "open login", chromedp.Navigate(s.URL+"/login"), chromedp.WaitVisible(tid("login-form")))
	checkWidth(t, ctx, "login")
	shot(t, ctx, "login-390")
	login(t, ctx, s, s.Token)
	for _, p := range allPages {
		run(t, ctx, "open "+p.path, chromedp.Navigate(s.URL+p.path), chromedp.WaitVisible(tid(p.ready)))
		checkWidth(t, ctx, p.name)
		shot(t, ctx, p.name+"-390")
	}
	run(t, ctx, "desktop size", chromedp.EmulateViewport(1280, 900))
	for _, p := range allPages {
		run(t, ctx, "open "+p.path, chromedp.Navigate(s.URL+p.path), chromedp.WaitVisible(tid(p.ready)))
		shot(t, ctx, p.name+"-1280")
	}
}

// checkWidth fails when the page is wider than the window.
func checkWidth(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	// Let late layout (fonts, live updates) settle.
	time.Sleep(150 * time.Millisecond)
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`))
	if err != nil {
		t.Fatalf("%s: measure: %v", name, err)
	}
	if !wide {
		sw := attrJS(t, ctx, `String(document.documentElement.scrollWidth) + " > " + window.innerWidth`)
		t.Errorf("%s scrolls sideways: scrollWidth %s; past the edge: %s", name, sw, attrJS(t, ctx, overflowing))
	}
}

// shot takes a full-page screenshot and, with TOOLGATE_SCREENSHOTS=1
// (`make screenshots`), saves it into pagesDir. An ordinary test run leaves
// the committed pictures alone, since they show times and would change on
// every run.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if len(png) == 0 {
		t.Fatalf("screenshot %s is empty", name)
	}
	if os.Getenv("TOOLGATE_SCREENSHOTS") != "1" {
		return
	}
	if err := os.WriteFile(filepath.Join(pagesDir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
