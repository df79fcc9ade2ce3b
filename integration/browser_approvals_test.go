package integration

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestBrowserApprovals drives the live approvals inbox in headless Chromium
// against the real binary: two tabs on /approvals, an agent's ask appears in
// both with its tool, command, matched rule and reason, "Allow once" in one
// tab answers the agent's waiting check with allow, and the prompt leaves
// both tabs.
func TestBrowserApprovals(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	agent := createToken(t, s, "agent-runtime", "agent")
	rule := map[string]any{"id": "ask_make_deploy", "tools": []string{"bash"}, "pattern": "make deploy*",
		"action": "ask", "description": "deploys need a person"}
	if st, _, body := s.Call(s.Token, "POST", "/api/v1/permissions/rules", rule, nil); st != 201 && st != 200 {
		t.Fatalf("add the ask rule: %d %s", st, body)
	}
	ctx := newBrowser(t)
	// The viewer is in India (UTC+5:30): times show in their zone.
	run(t, ctx, "time zone", timezone("Asia/Kolkata"))

	run(t, ctx, "log in",
		chromedp.Navigate(s.URL+"/"),
		chromedp.WaitVisible(tid("login-form")),
		chromedp.SendKeys(tid("token"), s.Token),
		chromedp.Click(tid("login-submit")),
		chromedp.WaitVisible(tid("severity-table")))
	openInbox := func(tab context.Context, name string) {
		t.Helper()
		run(t, tab, "open /approvals in "+name, chromedp.Navigate(s.URL+"/approvals"), chromedp.WaitVisible(tid("no-approvals")))
		waitJS(t, tab, name+" to be live", `document.querySelector('[data-testid="live-status"]').dataset.state === "on"`)
	}
	openInbox(ctx, "tab 1")
	// A second tab of the same browser shares the session cookie.
	tab2, cancelTab2 := chromedp.NewContext(ctx)
	defer cancelTab2()
	openInbox(tab2, "tab 2")
	screenshot(t, ctx, "approvals-01-empty")

	res := checkAsync(s, agent, map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "make deploy-prod /srv/releases"},
		"channel_id": "web", "session_id": "agent-1", "wait_seconds": 20})
	for _, tab := range []context.Context{ctx, tab2} {
		run(t, tab, "see the prompt", chromedp.WaitVisible(tid("approval")))
	}
	pending := listApprovals(t, s, s.Token, "pending")
	if len(pending) != 1 {
		t.Fatalf("pending approvals: %d, want 1", len(pending))
	}
	item := `[data-testid="approval"] `
	for _, c := range []struct{ field, want string }{
		{field: "tool", want: "bash"},
		{field: "summary", want: "make deploy-prod"},
		{field: "rule", want: "ask_make_deploy"},
		{field: "reason", want: "deploys need a person"},
		{field: "channel", want: "web"},
		{field: "session", want: "agent-1"},
		{field: "external", want: "/srv/releases"},
	} {
		for i, tab := range []context.Context{ctx, tab2} {
			got := strings.TrimSpace(attrJS(t, tab, `document.querySelector('`+item+`[data-field="`+c.field+`"]').textContent`))
			if !strings.Contains(got, c.want) {
				t.Errorf("tab %d: prompt %s = %q, want it to show %q", i+1, c.field, got, c.want)
			}
		}
	}
	if id := attrJS(t, ctx, `document.querySelector('[data-testid="approval"]').dataset.approvalId`); id != pending[0].ID {
		t.Errorf("prompt id: got %q, want %q", id, pending[0].ID)
	}
	screenshot(t, ctx, "approvals-02-prompt")
	screenshot(t, tab2, "approvals-03-prompt-second-tab")

	// The card says what always-allow remembers, how risky the call is and
	// when it expires, as a countdown rather than a timestamp.
	if got := textOf(t, ctx, tid("allow-always-pattern")); !strings.Contains(got, "command make deploy-prod /srv/releases") {
		t.Errorf("always allow says %q, want the exact command it remembers", got)
	}
	if got := textOf(t, ctx, tid("approval-risk")); !strings.Contains(got, "your rule") || !strings.Contains(got, "outside the workspace") {
		t.Errorf("risk cue: %q", got)
	}
	waitJS(t, ctx, "the countdown to run", `/^in \d+:\d\d$/.test(document.querySelector('[data-testid="approval-countdown"]').textContent)`)
	local, utc := textOf(t, ctx, tid("approval-expires")), attrJS(t, ctx, `document.querySelector('[data-testid="approval-expires"]').title`)
	if !regexp.MustCompile(`^\d\d:\d\d:\d\d$`).MatchString(local) || !regexp.MustCompile(`^\d\d:\d\d:\d\d UTC$`).MatchString(utc) {
		t.Errorf("expiry: got %q (title %q), want the viewer's local time with the UTC time on hover", local, utc)
	} else if lt, err1 := time.Parse("15:04:05", local); err1 == nil {
		ut, _ := time.Parse("15:04:05 UTC", utc)
		if d := (lt.Sub(ut) + 24*time.Hour) % (24 * time.Hour); d != 5*time.Hour+30*time.Minute {
			t.Errorf("expiry: local %s is %s after UTC %s, want 5h30m (Asia/Kolkata)", local, d, utc)
		}
	}

	// Deny, then undo within the grace time: nothing is sent.
	run(t, ctx, "deny", chromedp.Click(tid("deny")), chromedp.WaitVisible(tid("undo")))
	if got := textOf(t, ctx, tid("toast")); !strings.Contains(got, "Denied") {
		t.Errorf("toast after deny: %q", got)
	}
	screenshot(t, ctx, "approvals-02b-undo-toast")
	run(t, ctx, "undo", chromedp.Click(tid("undo")), chromedp.WaitVisible(tid("approval")))
	time.Sleep(6 * time.Second) // past the grace time: an undone answer must never go out
	if p := listApprovals(t, s, s.Token, "pending"); len(p) != 1 {
		t.Fatalf("after undo: %d pending, want the ask still waiting", len(p))
	}

	run(t, ctx, "allow once", chromedp.Click(tid("allow-once")))
	got := answered(t, res, 15*time.Second)
	if got.Decision != "allow" || got.Approval == nil || got.Approval.Choice != "allow_once" {
		t.Errorf("the agent's check: got %+v, want allow (allow_once)", got)
	}
	for i, tab := range []context.Context{ctx, tab2} {
		waitJS(t, tab, "the prompt to leave tab "+string(rune('1'+i)),
			`document.querySelectorAll('[data-testid="approval"]').length === 0 && !document.querySelector('[data-testid="no-approvals"]').hidden`)
	}
	screenshot(t, ctx, "approvals-04-answered")
	screenshot(t, tab2, "approvals-05-answered-second-tab")
	if cfg := s.ReadFile("config.yaml"); strings.Contains(cfg, "make deploy-prod") {
		t.Errorf("allow once wrote an override to config.yaml:\n%s", cfg)
	}
}

// timezone makes the tab's clock run in a time zone, as a viewer there sees
// it.
func timezone(id string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: id})
		return chromedp.Void{}, err
	}
}
