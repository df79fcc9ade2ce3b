package integration

import (
	"testing"
	"time"
)

// TestRevokedTokenEndsItsWebsocket: revoking an approver's token closes the
// websocket it connected with at once, so that it cannot answer asks any
// more, while other clients stay connected.
func TestRevokedTokenEndsItsWebsocket(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	id, secret := createTokenID(t, s, "erin", "approver")
	erin, _ := connectWS(t, s, secret)
	admin, _ := connectWS(t, s, s.Token)

	start := time.Now()
	if st, _, body := s.Call(s.Token, "DELETE", "/api/v1/tokens/"+id, nil, nil); st != 204 && st != 200 {
		t.Fatalf("revoke = %d %s", st, body)
	}
	if !erin.closedWithin(3 * time.Second) {
		t.Fatalf("the revoked token's websocket is still open after %v", time.Since(start))
	}
	t.Logf("closed %v after the revocation", time.Since(start).Round(time.Millisecond))
	if admin.closedWithin(300 * time.Millisecond) {
		t.Error("the admin's websocket closed too")
	}
}
