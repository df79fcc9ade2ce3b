package integration

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestBrowserTokensPage drives the tokens page as a browser-like client: a
// new approver token's secret is shown once and works, the list never shows
// it again, and revoke asks for a confirmation before the token stops
// working.
func TestBrowserTokensPage(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	c := signIn(t, s)
	_, page := c.get("/tokens")
	f := fields(page)
	status, body := c.post("/tokens", url.Values{"csrf_token": {f["csrf_token"]}, "name": {"alice"}, "role": {"approver"}}, s.URL)
	if status != 200 {
		t.Fatalf("create: %d", status)
	}
	m := regexp.MustCompile(`data-testid="token-secret">([^<]+)<`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no secret shown after create:\n%s", body)
	}
	secret := m[1]
	if st, _, _ := s.Call(secret, "GET", "/api/v1/approvals", nil, nil); st != 200 {
		t.Errorf("the new approver token: GET /api/v1/approvals = %d, want 200", st)
	}
	_, page = c.get("/tokens")
	if strings.Contains(page, secret) {
		t.Errorf("the tokens page shows the secret again")
	}
	id := regexp.MustCompile(`data-token-id="([^"]+)"`).FindStringSubmatch(page)
	if id == nil {
		t.Fatalf("the token is not listed:\n%s", page)
	}
	form := url.Values{"csrf_token": {f["csrf_token"]}, "id": {id[1]}}
	if _, body := c.post("/tokens/revoke", form, s.URL); !strings.Contains(body, `data-testid="confirm"`) {
		t.Fatalf("revoke did not ask for a confirmation")
	}
	if st, _, _ := s.Call(secret, "GET", "/api/v1/approvals", nil, nil); st != 200 {
		t.Errorf("the token stopped working before the revoke was confirmed: %d", st)
	}
	form.Set("confirm", "yes")
	c.post("/tokens/revoke", form, s.URL)
	if st, _, _ := s.Call(secret, "GET", "/api/v1/approvals", nil, nil); st != 401 {
		t.Errorf("revoked token: GET /api/v1/approvals = %d, want 401", st)
	}
}
