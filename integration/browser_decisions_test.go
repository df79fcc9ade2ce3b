package integration

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserDecisionRow checks the decision log page: the time presets
// and date pickers filter, a row expands to the reason in words and the
// explain trace, and its link opens the call in the playground, prefilled
// and decided.
func TestBrowserDecisionRow(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	rule := map[string]any{"id": "ask_make_deploy", "tools": []string{"bash"}, "pattern": "make deploy*",
		"action": "ask", "description": "deploys need a person"}
	if st, _, body := s.Call(s.Token, "POST", "/api/v1/permissions/rules", rule, nil); st != 201 && st != 200 {
		t.Fatalf("add the ask rule: %d %s", st, body)
	}
	agent := createToken(t, s, "agent-runtime", "agent")
	if st, _, body := s.Call(agent, "POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash",
		"tool_args": map[string]any{"command": "make deploy-prod"}, "channel_id": "web"}, nil); st != 200 {
		t.Fatalf("evaluate: %d %s", st, body)
	}
	ctx := newBrowser(t)
	login(t, ctx, s, s.Token)
	run(t, ctx, "decisions, last 15 minutes",
		chromedp.Navigate(s.URL+"/decisions"),
		chromedp.WaitVisible(tid("time-presets")),
		chromedp.Click(tid("preset-15m")),
		chromedp.WaitVisible(tid("decisions-table")))
	if got := attrJS(t, ctx, `new URL(location.href).searchParams.get("range")`); got != "15m" {
		t.Errorf("preset link: range %q, want 15m", got)
	}
	if got := attrJS(t, ctx, `document.querySelector('[data-testid="filter-since"]').type`); got != "datetime-local" {
		t.Errorf("since input type %q, want a date picker", got)
	}
	waitJS(t, ctx, "the log to have the call", `document.querySelectorAll('[data-testid="decision-row"]').length === 1`)
	if visible := attrJS(t, ctx, `String(document.querySelector('[data-testid="decision-reason"]').checkVisibility())`); visible != "false" {
		t.Errorf("the reason shows before the row is expanded")
	}
	run(t, ctx, "expand the row",
		chromedp.Click(chromedp.CSS(`[data-testid="decision-details"] summary`)),
		chromedp.WaitVisible(tid("decision-trace")))
	if got := textOf(t, ctx, tid("decision-reason")); !strings.Contains(got, "deploys need a person") {
		t.Errorf("reason: %q, want the rule's description", got)
	}
	if got := textOf(t, ctx, tid("decision-trace")); !strings.Contains(strings.ToLower(got), "decisive") {
		t.Errorf("trace: %q, want a decisive step", got)
	}
	screenshot(t, ctx, "decisions-expanded")
	run(t, ctx, "open in the playground",
		chromedp.Click(tid("decision-play")),
		chromedp.WaitVisible(tid("play-result")))
	if got := attrJS(t, ctx, `document.querySelector('[data-testid="play-command"]').value`); got != "make deploy-prod" {
		t.Errorf("playground command: %q, want the logged call", got)
	}
	if got := textOf(t, ctx, tid("play-rule")); !strings.Contains(got, "ask_make_deploy") {
		t.Errorf("playground rule: %q", got)
	}
}
