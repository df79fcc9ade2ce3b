package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/pg"
)

// TestSignInThatCannotBeStoredIsRefused: with the sessions in the shared
// database and the database away, a sign-in used to set a cookie for a
// session no replica had stored (the browser then bounced back to /login
// with no reason). It must answer 503 saying so, and set no session cookie.
func TestSignInThatCannotBeStoredIsRefused(t *testing.T) {
	env := newPGSessionsUI(t)
	cluster, srv, admin := env.cluster, env.srv, env.admin

	cluster.Stop()
	c, status, body := login(t, srv, admin)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "could not be stored") {
		t.Errorf("sign-in with the database away: got %d, want 503 saying the session could not be stored; body:\n%.400s", status, body)
	}
	u, _ := url.Parse(srv.URL)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == SessionCookie {
			t.Errorf("sign-in that was not stored set the session cookie %q", ck.Value)
		}
	}

	cluster.Start()
	if _, status, _ := login(t, srv, admin); status != http.StatusOK && status != http.StatusSeeOther {
		t.Errorf("sign-in after the database returned: got %d, want it to work", status)
	}
}

// pgSessionsUI is the pages over a temp config dir with their sessions in
// a fresh database of the shared test cluster.
type pgSessionsUI struct {
	cluster *pgtest.Cluster
	dsn     string
	shared  *auth.PGSessions
	srv     *httptest.Server
	admin   string
}

// newPGSessionsUI serves the pages with the sessions in a new database
// (operations time out after 300 ms, so a stopped cluster is seen soon).
func newPGSessionsUI(t *testing.T) pgSessionsUI {
	t.Helper()
	cluster := pgtest.Start(t)
	dsn := cluster.NewDatabase(t)
	ctx := context.Background()
	// A stopped cluster refuses connections at once, so the sign-in fails
	// fast without a short timeout; a short one only made the set-up's
	// first connection fail on a loaded machine.
	db, err := pg.Open(ctx, dsn, pg.Options{OpTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	shared, err := auth.OpenPGSessions(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	srv, _, tokens := testServerWith(t, func(st *inforce.Holder, tokens *auth.Tokens) Deps {
		return Deps{Policy: st, Tokens: tokens, Sessions: NewSessionsOn(shared, 0, nil)}
	})
	admin, _ := tokens.AdminToken()
	return pgSessionsUI{cluster: cluster, dsn: dsn, shared: shared, srv: srv, admin: admin}
}
