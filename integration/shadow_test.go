package integration

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestShadowRules: a rule with mode: shadow decides nothing (git push
// still asks, make still asks), the decision log records what it would
// have decided, GET /api/v1/shadow lists those calls by rule, and turning
// the rule to enforce makes it decide.
func TestShadowRules(t *testing.T) {
	s := StartServer(t, ServerOptions{BuiltinYAML: "rules: []\n", ConfigYAML: `permissions:
  schema: tiered_policy
  tools: {bash: ask}
  rules:
    - {id: no_push, tools: [bash], pattern: "git push *", action: deny, mode: shadow}
    - {id: builds, tools: [bash], pattern: "make *", action: allow, mode: shadow}
    - {id: status, tools: [bash], pattern: "git status *", action: allow}
`})
	eval := func(cmd string) string {
		st, _, body := s.Call(s.Token, "POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": cmd}}, nil)
		if st != 200 {
			t.Fatalf("evaluate %q: %d %s", cmd, st, body)
		}
		return DecodeJSON[map[string]any](t, body)["level"].(string)
	}
	for cmd, want := range map[string]string{"git push origin main": "ask", "make build": "ask", "git status": "allow", "ls": "ask"} {
		if got := eval(cmd); got != want {
			t.Errorf("%q: %s, want %s (a shadow rule must decide nothing)", cmd, got, want)
		}
	}
	type call struct {
		RuleID      string `json:"rule_id"`
		Summary     string `json:"summary"`
		Level       string `json:"level"`
		ShadowLevel string `json:"shadow_level"`
	}
	list := func(query string) []call {
		st, _, body := s.Call(s.Token, "GET", "/api/v1/shadow"+query, nil, nil)
		if st != 200 {
			t.Fatalf("GET /api/v1/shadow%s: %d %s", query, st, body)
		}
		return DecodeJSON[struct{ Calls []call }](t, body).Calls
	}
	var calls []call
	WaitFor(t, 5*time.Second, "the log to hold the shadow outcomes", func() bool { calls = list(""); return len(calls) == 2 })
	got := map[string]call{}
	for _, c := range calls {
		got[c.RuleID] = c
	}
	if c := got["no_push"]; c.Summary != "git push origin main" || c.Level != "ask" || c.ShadowLevel != "deny" {
		t.Errorf("no_push: %+v", c)
	}
	if c := got["builds"]; c.Summary != "make build" || c.Level != "ask" || c.ShadowLevel != "allow" {
		t.Errorf("builds: %+v", c)
	}
	if only := list("?rule_id=no_push"); len(only) != 1 || only[0].RuleID != "no_push" {
		t.Errorf("by rule: %+v", only)
	}
	if st, _, body := s.Call(s.Token, "GET", "/api/v1/shadow?rule_id=no_push&colour=red", nil, nil); st != 400 {
		t.Errorf("an unknown parameter: %d %s", st, body)
	}
	// Enforce it: PATCH mode to enforce.
	st, _, body := s.Call(s.Token, "PATCH", "/api/v1/permissions/rules/no_push", map[string]any{"mode": "enforce"}, http.Header{})
	if st != 200 {
		t.Fatalf("enforce: %d %s", st, body)
	}
	if got := eval("git push origin main"); got != "deny" {
		t.Errorf("the enforced rule does not decide: %s", got)
	}
	if st, _, body := s.Call(s.Token, "PATCH", "/api/v1/permissions/rules/builds", map[string]any{"mode": "maybe"}, nil); st != 400 || !strings.Contains(string(body), "mode") {
		t.Errorf("a bad mode: %d %s", st, body)
	}
}

// TestBrowserShadowPage: the rules table marks a shadow rule, the shadow
// page lists the calls it would have decided otherwise, and its one button
// enforces the rule (config.yaml loses the mode; the next call is decided
// by it).
func TestBrowserShadowPage(t *testing.T) {
	s := StartServer(t, ServerOptions{BuiltinYAML: "rules: []\n", ConfigYAML: `permissions:
  schema: tiered_policy
  tools: {bash: ask}
  rules:
    - {id: no_push, tools: [bash], pattern: "git push *", action: deny, mode: shadow}
`})
	eval := func(cmd string) string {
		st, _, body := s.Call(s.Token, "POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": cmd}}, nil)
		if st != 200 {
			t.Fatalf("evaluate %q: %d %s", cmd, st, body)
		}
		return DecodeJSON[map[string]any](t, body)["level"].(string)
	}
	if got := eval("git push origin main"); got != "ask" {
		t.Fatalf("shadow rule decided: %s", got)
	}
	WaitFor(t, 5*time.Second, "the shadow outcome to be logged", func() bool {
		_, _, body := s.Call(s.Token, "GET", "/api/v1/shadow", nil, nil)
		return strings.Contains(string(body), "no_push")
	})
	ctx := newBrowser(t)
	run(t, ctx, "log in",
		chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(tid("login-form")),
		chromedp.SendKeys(tid("token"), s.Token), chromedp.Click(tid("login-submit")),
		chromedp.WaitVisible(tid("severity-table")))
	run(t, ctx, "the rules table", chromedp.Navigate(s.URL+"/rules"), chromedp.WaitVisible(tid("rule-shadow")))
	run(t, ctx, "the shadow page", chromedp.Click(tid("rule-shadow")), chromedp.WaitVisible(tid("shadow-calls")))
	if got := textOf(t, ctx, tid("shadow-calls")); !strings.Contains(got, "git push origin main") || !strings.Contains(textOf(t, ctx, tid("shadow-would")), "deny") {
		t.Errorf("shadow page calls: %q", got)
	}
	screenshot(t, ctx, "shadow-page")
	run(t, ctx, "enforce", chromedp.Click(tid("shadow-enforce")), chromedp.WaitVisible(tid("flash")))
	if c := s.ReadFile("config.yaml"); strings.Contains(c, "mode:") || !strings.Contains(c, "id: no_push") {
		t.Errorf("after enforce, config.yaml:\n%s", c)
	}
	if got := eval("git push origin main"); got != "deny" {
		t.Errorf("the enforced rule does not decide: %s", got)
	}
}
