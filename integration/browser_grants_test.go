package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// grantCheck is what a /check answers, with the rule that decided.
type grantCheck struct {
	Decision    string      `json:"decision"`
	MatchedRule string      `json:"matched_rule"`
	Approval    *wsApproval `json:"approval"`
}

// checkNow sends a /check that waits for no one and decodes its answer.
func checkNow(t *testing.T, s *Server, token string, body map[string]any) grantCheck {
	t.Helper()
	body["wait_seconds"] = 0
	st, _, raw := s.Call(token, "POST", "/api/v1/check", body, nil)
	if st != 200 {
		t.Fatalf("check %v: %d %s", body, st, raw)
	}
	var out grantCheck
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("check answer %s: %v", raw, err)
	}
	return out
}

// TestBrowserGrantsForSession answers an ask in Chromium with "Allow for
// this session" and follows the grant it makes: the waiting check is
// allowed, the same call in the same session is allowed at once while one
// in another session still asks, the Grants page lists the grant, revoking
// it there (after a confirmation) makes the next identical call ask again.
// It runs at a phone's size: every answer of the card is visible and no
// page scrolls sideways.
func TestBrowserGrantsForSession(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	agent := createToken(t, s, "agent-runtime", "agent")
	rule := map[string]any{"id": "ask_make_deploy", "tools": []string{"bash"}, "pattern": "make deploy*",
		"action": "ask", "description": "deploys need a person"}
	if st, _, body := s.Call(s.Token, "POST", "/api/v1/permissions/rules", rule, nil); st != 201 && st != 200 {
		t.Fatalf("add the ask rule: %d %s", st, body)
	}
	call := func(session string) map[string]any {
		return map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "make deploy-prod"},
			"channel_id": "web", "session_id": session}
	}

	ctx := newBrowser(t)
	run(t, ctx, "phone size", chromedp.EmulateViewport(390, 844))
	login(t, ctx, s, s.Token)
	run(t, ctx, "open /approvals", chromedp.Navigate(s.URL+"/approvals"), chromedp.WaitVisible(tid("no-approvals")))
	waitJS(t, ctx, "the inbox to be live", `document.querySelector('[data-testid="live-status"]').dataset.state === "on"`)

	first := call("s1")
	first["wait_seconds"] = 20
	res := checkAsync(s, agent, first)
	run(t, ctx, "the ask's card", chromedp.WaitVisible(tid("approval")))

	// On the phone every answer is on the screen, inside its width.
	for _, id := range []string{"allow-once", "allow-session", "allow-for", "allow-for-900", "allow-for-28800", "allow-for-86400", "allow-always", "deny"} {
		box := attrJS(t, ctx, `(function(){var b=document.querySelector('[data-testid="approval"] [data-testid="`+id+`"]');
			if(!b){return "missing";} var r=b.getBoundingClientRect();
			return (r.width>0&&r.height>0&&r.left>=0&&r.right<=window.innerWidth+0.5&&getComputedStyle(b).visibility!=="hidden")?"ok":"at "+r.left+".."+r.right;})()`)
		if box != "ok" {
			t.Errorf("answer %s on a 390 px screen: %s", id, box)
		}
	}
	checkWidth(t, ctx, "approvals with a card")
	screenshot(t, ctx, "grants-01-card-390")
	run(t, ctx, "desktop size", chromedp.EmulateViewport(1280, 900))
	screenshot(t, ctx, "grants-01-card-1280")
	run(t, ctx, "phone size again", chromedp.EmulateViewport(390, 844))
	if got := textOf(t, ctx, tid("allow-session-scope")); !strings.Contains(got, "make deploy-prod") || !strings.Contains(got, "s1") {
		t.Errorf("the session answer's scope says %q, want the command and the session", got)
	}

	run(t, ctx, "allow for this session", chromedp.Click(tid("allow-session")))
	got := answered(t, res, 20*time.Second)
	if got.Decision != "allow" || got.Approval == nil || got.Approval.Choice != "allow_session" {
		t.Fatalf("the waiting check: %+v (approval %+v), want allow by allow_session", got, got.Approval)
	}
	waitJS(t, ctx, "the card to leave", `document.querySelectorAll('[data-testid="approval"]').length === 0`)
	waitJS(t, ctx, "the answer to say until when", `!!document.querySelector('[data-testid="recent-grant"]')`)
	// The page rendered afresh says it too, and links to the grant.
	run(t, ctx, "reload /approvals", chromedp.Navigate(s.URL+"/approvals"), chromedp.WaitReady(tid("recent-grant")))
	if got := textOf(t, ctx, tid("recent-answer")); !strings.Contains(got, "Allowed for this session") || !strings.Contains(got, "granted until") {
		t.Errorf("the recent answer says %q, want what was granted and until when", got)
	}

	again := checkNow(t, s, agent, call("s1"))
	if again.Decision != "allow" || !strings.Contains(again.MatchedRule, "grants[") {
		t.Fatalf("the same call in s1: %+v, want allow by the grant at once", again)
	}
	grantID := again.MatchedRule[strings.Index(again.MatchedRule, "grants[")+len("grants[") : len(again.MatchedRule)-1]
	if other := checkNow(t, s, agent, call("s2")); other.Decision == "allow" {
		t.Errorf("the same call in another session: %+v, want it to ask (the grant is s1's)", other)
	}

	// The Grants page lists it, and the decision log links to it.
	run(t, ctx, "open /grants", chromedp.Navigate(s.URL+"/grants"), chromedp.WaitVisible(tid("grant-row")))
	checkWidth(t, ctx, "grants")
	screenshot(t, ctx, "grants-02-page-390")
	if href := attrJS(t, ctx, `(function(){var a=document.querySelector('[data-testid="nav-Grants"]');return a?a.getAttribute("href"):"none";})()`); href != "/grants" {
		t.Errorf("the menu's Grants link: %q", href)
	}
	row := textOf(t, ctx, chromedp.CSS(`[data-grant-id="`+grantID+`"]`))
	for _, want := range []string{"bash", "make deploy-prod", "this session", "s1", "rest"} {
		if !strings.Contains(row, want) {
			t.Errorf("the grant's row %q does not say %q", row, want)
		}
	}
	run(t, ctx, "filter by another session", chromedp.Navigate(s.URL+"/grants?session=s2"), chromedp.WaitVisible(tid("no-grants")))
	run(t, ctx, "open /decisions", chromedp.Navigate(s.URL+"/decisions"), chromedp.WaitVisible(tid("decision-grant")))
	if href := attrJS(t, ctx, `document.querySelector('[data-testid="decision-grant"]').getAttribute("href")`); href != "/grants#"+grantID {
		t.Errorf("the decision links to %q, want /grants#%s", href, grantID)
	}

	// Revoke, with its confirmation.
	run(t, ctx, "revoke", chromedp.Navigate(s.URL+"/grants"), chromedp.WaitVisible(tid("grant-revoke")), chromedp.Click(tid("grant-revoke")),
		chromedp.WaitVisible(tid("confirm")))
	if lead := textOf(t, ctx, tid("confirm-lead")); !strings.Contains(lead, grantID) || !strings.Contains(lead, "make deploy-prod") {
		t.Errorf("the confirmation says %q, want the grant and what it covers", lead)
	}
	if still := checkNow(t, s, agent, call("s1")); still.Decision != "allow" {
		t.Errorf("before the revoke is confirmed the grant must hold: %+v", still)
	}
	checkWidth(t, ctx, "revoke confirmation")
	run(t, ctx, "confirm the revoke", chromedp.Click(tid("confirm-yes")), chromedp.WaitVisible(tid("flash")))
	if flash := textOf(t, ctx, tid("flash")); !strings.Contains(flash, "Revoked grant "+grantID) {
		t.Errorf("flash after the revoke: %q", flash)
	}
	run(t, ctx, "the list is empty", chromedp.WaitVisible(tid("no-grants")))

	third := checkNow(t, s, agent, call("s1"))
	if third.Decision == "allow" || third.Approval == nil {
		t.Errorf("after the revoke the call in s1: %+v, want it to ask again", third)
	}
	checkDecisionGone(t, ctx, s)
}

// checkDecisionGone: the decision the revoked grant made now says the
// grant is gone instead of linking to it.
func checkDecisionGone(t *testing.T, ctx context.Context, s *Server) {
	t.Helper()
	run(t, ctx, "open /decisions", chromedp.Navigate(s.URL+"/decisions"), chromedp.WaitVisible(tid("decision-grant-gone")))
	if n := attrJS(t, ctx, `String(document.querySelectorAll('[data-testid="decision-grant"]').length)`); n != "0" {
		t.Errorf("%s decisions still link to the revoked grant", n)
	}
}
