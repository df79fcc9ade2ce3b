package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/pg"
)

// TestSignOutThatFailedIsNotReportedAsDone: with the sessions in the shared
// database, a sign-out whose delete does not reach the database (a blip,
// a lock, the operation timeout) was answered like a good one (cookie
// cleared, off to /login) while the session row stayed: the same cookie,
// kept by whoever copied it, went on working for the session's 12 hours on
// every replica. A sign-out the store did not take must say so (or be
// retried until it is); it must never look done while the session lives.
func TestSignOutThatFailedIsNotReportedAsDone(t *testing.T) {
	env := newPGSessionsUI(t)
	dsn, shared, srv, admin := env.dsn, env.shared, env.srv, env.admin
	ctx := context.Background()
	c, _, _ := login(t, srv, admin)
	u, _ := url.Parse(srv.URL)
	var cookie *http.Cookie
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == SessionCookie {
			cookie = ck
		}
	}
	if cookie == nil {
		t.Fatal("no session cookie after sign-in")
	}
	_, page := get(t, c, srv.URL+"/")
	csrf := match(csrfField, page)

	// Deletes of sessions wait (reads go on) while another session holds
	// the table: this sign-out's delete times out.
	locker, err := pg.Open(ctx, dsn, pg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(locker.Close)
	tx, err := locker.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE auth_sessions IN EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{Jar: c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.PostForm(srv.URL+"/logout", url.Values{"csrf_token": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_ = tx.Rollback(ctx)
	signedOut := resp.StatusCode == http.StatusSeeOther || resp.StatusCode == http.StatusFound
	if !signedOut {
		return // the failure was said: fine
	}
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	req.AddCookie(&http.Cookie{Name: SessionCookie, Value: cookie.Value})
	after, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	after.Body.Close()
	if after.StatusCode == http.StatusOK {
		t.Errorf("sign-out answered %d -> %s (done), but the same cookie still opens the overview (%d) once the database takes writes again", resp.StatusCode, resp.Header.Get("Location"), after.StatusCode)
	}
	// Every other replica reads the database: the retried delete reaches it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := shared.Get(ctx, cookie.Value); errors.Is(err, auth.ErrNoSession) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("5 s after the database takes writes again the signed-out session is still in it (other replicas accept the cookie)")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
