package integration

import (
	"context"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// fakeNotifications replaces the Notification API before any page script
// runs: it counts permission requests, records the notifications shown,
// and lets the test say whether the tab is hidden.
const fakeNotifications = `(() => {
  window.__asked = 0; window.__notes = []; window.__perm = "default"; window.__hidden = false;
  class FakeNotification {
    constructor(title, opts) { window.__notes.push(title + ": " + ((opts && opts.body) || "")); }
    static get permission() { return window.__perm; }
    static requestPermission(cb) { window.__asked++; window.__perm = "granted"; if (cb) { cb("granted"); } return Promise.resolve("granted"); }
  }
  window.Notification = FakeNotification;
  Object.defineProperty(document, "hidden", { get: () => window.__hidden });
})();`

// initScript runs JavaScript in every new document of the tab, before the
// page's own scripts.
func initScript(src string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src})
		return chromedp.Void{}, err
	}
}

// askPending makes an ask that stays pending (wait_seconds 0 answers at
// once with "pending") and returns its id.
func askPending(t *testing.T, s *Server, agent, command string) string {
	t.Helper()
	st, _, body := s.Call(agent, "POST", "/api/v1/check", map[string]any{"tool_name": "bash",
		"tool_args": map[string]any{"command": command}, "session_id": "s1", "wait_seconds": 0}, nil)
	if st != 200 {
		t.Fatalf("check %q: %d %s", command, st, body)
	}
	a := DecodeJSON[struct {
		Decision string `json:"decision"`
		Approval struct {
			ID string `json:"id"`
		} `json:"approval"`
	}](t, body)
	if a.Decision != "pending" || a.Approval.ID == "" {
		t.Fatalf("check %q: got %s, want a pending ask", command, body)
	}
	return a.Approval.ID
}

// TestBrowserWaitingAsks checks that waiting asks announce themselves on
// every page: with two asks pending the menu badge and the tab title say 2
// on the overview; a third arriving live makes it 3 and, once the person
// has allowed notifications with the button (never asked on load) and the
// tab is hidden, shows a notification; an answer elsewhere brings it back
// to 2. An approver who signs in lands on /approvals.
func TestBrowserWaitingAsks(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	agent := createToken(t, s, "agent-runtime", "agent")
	askPending(t, s, agent, "make deploy-one")
	askPending(t, s, agent, "make deploy-two")
	ctx := newBrowser(t)
	run(t, ctx, "fake notifications", initScript(fakeNotifications))
	login(t, ctx, s, s.Token)

	for _, path := range []string{"/", "/rules", "/decisions"} {
		run(t, ctx, "open "+path, chromedp.Navigate(s.URL+path), chromedp.WaitVisible(tid("user")))
		if got := textOf(t, ctx, tid("pending-badge")); got != "2" {
			t.Errorf("%s: badge %q, want 2", path, got)
		}
		if got := attrJS(t, ctx, `document.title`); !strings.HasPrefix(got, "(2) ") {
			t.Errorf("%s: title %q, want it to start with (2)", path, got)
		}
	}
	screenshot(t, ctx, "live-01-badge")

	if got := attrJS(t, ctx, `String(window.__asked)`); got != "0" {
		t.Errorf("notification permission asked %s times on load, want never", got)
	}
	run(t, ctx, "allow notifications", chromedp.Click(tid("notify-button")))
	if got := attrJS(t, ctx, `String(window.__asked)`); got != "1" {
		t.Errorf("notification permission asked %s times after the click, want once", got)
	}
	waitJS(t, ctx, "the button to go once allowed", `document.querySelector('[data-testid="notify-button"]').hidden`)

	run(t, ctx, "hide the tab", chromedp.Evaluate[chromedp.Void](`window.__hidden = true`))
	third := askPending(t, s, agent, "make deploy-three")
	waitJS(t, ctx, "the badge to say 3", `document.querySelector('[data-testid="pending-badge"]').textContent === "3" && document.title.startsWith("(3) ")`)
	waitJS(t, ctx, "a notification", `window.__notes.length === 1`)
	if got := attrJS(t, ctx, `window.__notes[0]`); !strings.Contains(got, "make deploy-three") {
		t.Errorf("notification: %q, want the command", got)
	}
	if st, body := decide(t, s, s.Token, third, "deny"); st != 200 {
		t.Fatalf("deny: %d %s", st, body)
	}
	waitJS(t, ctx, "the badge to say 2 again", `document.querySelector('[data-testid="pending-badge"]').textContent === "2" && document.title.startsWith("(2) ")`)

	// An approver lands on the inbox.
	approver := createToken(t, s, "alice", "approver")
	run(t, ctx, "log out", chromedp.Click(tid("logout")), chromedp.WaitVisible(tid("login-form")))
	login(t, ctx, s, approver)
	loc := attrJS(t, ctx, `location.href`)
	if u, _ := url.Parse(loc); u == nil || u.Path != "/approvals" {
		t.Errorf("approver landed on %s, want /approvals", loc)
	}
	if got := attrJS(t, ctx, `String(document.querySelectorAll('[data-testid="approval"]').length)`); got != "2" {
		t.Errorf("approver's inbox lists %s asks, want 2", got)
	}
}

// TestBrowserChinese checks the pages' second language: the login page
// follows Accept-Language, and in the browser the switch sets zh-CN, which
// the approvals page then speaks (with an ask waiting) and every later
// page remembers; at 390 px the Chinese page does not scroll sideways.
func TestBrowserChinese(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	agent := createToken(t, s, "agent-runtime", "agent")
	askPending(t, s, agent, "make deploy-one")
	resp := s.Request("", "GET", "/login", nil, map[string][]string{"Accept-Language": {"zh-CN,zh;q=0.9,en;q=0.8"}})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if st := resp.StatusCode; st != 200 || !strings.Contains(string(body), `<html lang="zh-CN">`) || !strings.Contains(string(body), "使用管理员或审批人令牌登录") {
		t.Errorf("login with Accept-Language zh-CN: %d, want the Chinese page:\n%s", st, body)
	}

	ctx := newBrowser(t)
	login(t, ctx, s, s.Token)
	run(t, ctx, "phone size", chromedp.EmulateViewport(390, 844))
	run(t, ctx, "open approvals", chromedp.Navigate(s.URL+"/approvals"), chromedp.WaitVisible(tid("approval")))
	run(t, ctx, "open the menu", chromedp.Click(tid("menu-toggle")), chromedp.WaitVisible(tid("lang-zh-CN")))
	run(t, ctx, "switch to Chinese", chromedp.Click(tid("lang-zh-CN")), chromedp.WaitReady(tid("lang-en")))
	for _, c := range []struct{ what, expr, want string }{
		{what: "html lang", expr: `document.documentElement.lang`, want: "zh-CN"},
		{what: "heading", expr: `document.querySelector("main h1").textContent`, want: "审批"},
		{what: "allow once", expr: `document.querySelector('[data-testid="allow-once"]').firstChild.textContent`, want: "允许一次"},
		{what: "allow once's scope", expr: `document.querySelector('[data-testid="allow-once"] .remember').textContent`, want: "仅此一次；下次仍会询问"},
		{what: "deny", expr: `document.querySelector('[data-testid="deny"]').textContent`, want: "拒绝"},
		{what: "path", expr: `location.pathname`, want: "/approvals"},
	} {
		if got := strings.TrimSpace(attrJS(t, ctx, c.expr)); got != c.want {
			t.Errorf("zh-CN %s: got %q, want %q", c.what, got, c.want)
		}
	}
	waitJS(t, ctx, "the countdown in Chinese", `document.querySelector('[data-testid="approval-countdown"]').textContent.startsWith("剩余")`)
	checkWidth(t, ctx, "approvals in zh-CN")
	screenshot(t, ctx, "zh-CN-approvals-390")
	shot(t, ctx, "approvals-zh-CN-390")

	run(t, ctx, "another page", chromedp.Navigate(s.URL+"/"), chromedp.WaitReady(tid("user")))
	// textContent: on the phone the link is in the folded menu.
	if got := strings.TrimSpace(attrJS(t, ctx, `document.querySelector('[data-testid="nav-Overview"]').textContent`)); got != "概览" {
		t.Errorf("the choice is not remembered: overview link %q", got)
	}
}
