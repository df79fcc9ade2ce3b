package integration

import (
	"strings"
	"testing"
	"time"
)

// TestFailedSignInsAreThrottled: past five wrong tokens a minute from one
// address, every further wrong one waits and gets 429 with Retry-After,
// while a valid token from the same address still passes at once.
func TestFailedSignInsAreThrottled(t *testing.T) {
	s := StartServer(t, ServerOptions{Args: []string{"--auth-failures-per-minute", "5"}})
	for i := range 5 {
		if st, b, err := relDo(s, "tg_wrong", "GET", "/api/v1/permissions/tools", nil); err != nil || st != 401 {
			t.Fatalf("wrong token %d: %d %s %v", i, st, b, err)
		}
	}
	start := time.Now()
	resp := s.Request("tg_wrong", "GET", "/api/v1/permissions/tools", nil, nil)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || time.Since(start) < 400*time.Millisecond {
		t.Errorf("the sixth wrong token: %d, Retry-After %q, after %v; want 429 after a pause", resp.StatusCode, resp.Header.Get("Retry-After"), time.Since(start))
	}
	start = time.Now()
	if st, b, err := relDo(s, s.Token, "GET", "/api/v1/permissions/tools", nil); err != nil || st != 200 || time.Since(start) > 300*time.Millisecond {
		t.Errorf("the admin's valid token from the same address: %d %s %v in %v", st, b, err, time.Since(start))
	}
	b := secSignIn(t, s, s.Token) // a valid sign-in still works
	if st, page := b.get(t, "/approvals"); st != 200 || !strings.Contains(page, "approvals") {
		t.Errorf("signed in: %d", st)
	}
}
