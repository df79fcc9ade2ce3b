package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/templates"
)

// SessionCookie is the name of the browser session cookie.
const SessionCookie = "toolgate_session"

// DefaultSessionTTL is how long a browser session lasts.
const DefaultSessionTTL = 12 * time.Hour

// session is one signed-in browser as a request sees it.
type session struct {
	principal auth.Principal
	csrf      string
	expires   time.Time
}

// Sessions are the signed-in browsers. The cookie holds a random session
// id; the principal, CSRF token, expiry and flash message stay in an
// auth.SessionStore (in memory, or in the database that every replica
// shares). Sessions satisfies api.SessionAuthenticator. It is safe for
// concurrent use. A store that cannot be reached counts as no session
// (fail closed).
type Sessions struct {
	ttl   time.Duration
	now   func() time.Time
	store auth.SessionStore
	log   *slog.Logger
	mu    sync.Mutex
	// active, when set, says whether the token a session was signed in with
	// still exists, so that revoking a token ends its sessions at once.
	active func(tokenID string) bool
	// ended, when set, is told after a session is signed out (the hub then
	// closes that session's websockets at once), through any replica.
	ended func()
	// unsaved are sign-outs the store has not taken yet, with when their
	// session would end; retrying says a goroutine is deleting them.
	unsaved  map[string]time.Time
	retrying bool
}

// OnSignOut makes f be called after each sign-out (a Delete, here or, with
// a shared store, on another replica).
func (s *Sessions) OnSignOut(f func()) {
	s.mu.Lock()
	s.ended = f
	s.mu.Unlock()
}

// EndWithToken makes every session end as soon as the token it was signed
// in with is revoked: active reports whether a token id still exists.
func (s *Sessions) EndWithToken(active func(tokenID string) bool) {
	s.mu.Lock()
	s.active = active
	s.mu.Unlock()
}

// NewSessions returns an empty session store of this process; ttl <= 0
// means DefaultSessionTTL.
func NewSessions(ttl time.Duration) *Sessions {
	s := &Sessions{now: time.Now}
	s.init(auth.NewMemorySessions(func() time.Time { return s.now() }), ttl, nil)
	return s
}

// NewSessionsOn returns the sessions kept in store (auth.PGSessions for several
// replicas); ttl <= 0 means DefaultSessionTTL, log nil slog.Default().
func NewSessionsOn(store auth.SessionStore, ttl time.Duration, log *slog.Logger) *Sessions {
	s := &Sessions{now: time.Now}
	s.init(store, ttl, log)
	return s
}

func (s *Sessions) init(store auth.SessionStore, ttl time.Duration, log *slog.Logger) {
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	if log == nil {
		log = slog.Default()
	}
	s.ttl, s.store, s.log = ttl, store, log
	s.unsaved = map[string]time.Time{}
	store.OnDelete(s.signedOut)
}

// signedOut tells the OnSignOut hook.
func (s *Sessions) signedOut() {
	s.mu.Lock()
	ended := s.ended
	s.mu.Unlock()
	if ended != nil {
		ended()
	}
}

// Create starts a session for p and returns its id, or "" when the store
// failed (the browser then stays signed out); CreateSession says why.
func (s *Sessions) Create(p auth.Principal) string {
	id, err := s.CreateSession(p)
	if err != nil {
		s.log.Warn("web session not created", "name", p.Name, "err", err)
	}
	return id
}

// CreateSession starts a session for p and returns its id.
func (s *Sessions) CreateSession(p auth.Principal) (string, error) {
	id, _, err := s.store.Create(context.Background(), p, s.ttl)
	if err != nil {
		return "", fmt.Errorf("web: create session: %w", err)
	}
	return id, nil
}

// Delete ends a session; the OnSignOut hook runs after (through the store).
//
// A sign-out the store does not take (the database away, a lock, a
// timeout) must not leave the cookie working: the id is refused here at
// once and its delete retried in the background until the store takes it.
func (s *Sessions) Delete(id string) {
	err := s.store.Delete(context.Background(), id)
	if err == nil {
		return
	}
	s.log.Warn("web session not deleted yet; refused here and retried", "err", err)
	s.mu.Lock()
	s.unsaved[id] = s.now().Add(s.ttl)
	start := !s.retrying
	s.retrying = true
	s.mu.Unlock()
	s.signedOut()
	if start {
		go s.retryDeletes()
	}
}

// Backoff of the retried deletes.
const (
	deleteRetryMin = 100 * time.Millisecond
	deleteRetryMax = 5 * time.Second
)

// retryDeletes deletes the unsaved sign-outs until none is left; an id
// whose session would have expired by now is dropped.
func (s *Sessions) retryDeletes() {
	for wait := deleteRetryMin; ; wait = min(2*wait, deleteRetryMax) {
		time.Sleep(wait)
		s.mu.Lock()
		ids := make(map[string]time.Time, len(s.unsaved))
		maps.Copy(ids, s.unsaved)
		s.mu.Unlock()
		for id, until := range ids {
			if s.now().After(until) || s.store.Delete(context.Background(), id) == nil {
				s.mu.Lock()
				delete(s.unsaved, id)
				s.mu.Unlock()
			}
		}
		s.mu.Lock()
		if len(s.unsaved) == 0 {
			s.retrying = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
}

// signedOutHere reports whether id is a sign-out the store has not taken.
func (s *Sessions) signedOutHere(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.unsaved[id]
	return ok
}

// lookup returns the live session of a request and its id.
func (s *Sessions) lookup(r *http.Request) (session, string, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return session{}, "", false
	}
	se, ok := s.live(c.Value)
	return se, c.Value, ok
}

// live returns session id if it exists, has not expired and its token is
// still active, ending it otherwise. A store error counts as absent.
func (s *Sessions) live(id string) (session, bool) {
	if s.signedOutHere(id) {
		return session{}, false
	}
	stored, err := s.store.Get(context.Background(), id)
	if err != nil {
		if !errors.Is(err, auth.ErrNoSession) {
			s.log.Warn("web session lookup failed; treated as signed out", "err", err)
		}
		return session{}, false
	}
	s.mu.Lock()
	active := s.active
	s.mu.Unlock()
	if !s.now().Before(stored.Expires) || active != nil && !active(stored.Principal.TokenID) {
		s.Delete(id)
		return session{}, false
	}
	return session{principal: stored.Principal, csrf: stored.CSRF, expires: stored.Expires}, true
}

// valid reports whether session id still holds (see live).
func (s *Sessions) valid(id string) bool {
	_, ok := s.live(id)
	return ok
}

// SessionPrincipal returns the principal of a request's session cookie
// (api.SessionAuthenticator).
func (s *Sessions) SessionPrincipal(r *http.Request) (auth.Principal, bool) {
	se, _, ok := s.lookup(r)
	return se.principal, ok
}

// CheckCSRF reports whether token is the CSRF token of session id.
func (s *Sessions) CheckCSRF(id, token string) bool {
	if token == "" || s.signedOutHere(id) {
		return false
	}
	se, err := s.store.Get(context.Background(), id)
	return err == nil && subtle.ConstantTimeCompare([]byte(se.CSRF), []byte(token)) == 1
}

// SetFlash keeps a message to show on the session's next page.
func (s *Sessions) SetFlash(id string, f templates.Flash) {
	err := s.store.SetFlash(context.Background(), id, auth.Flash{Kind: f.Kind, Text: f.Text})
	if err != nil && !errors.Is(err, auth.ErrNoSession) {
		s.log.Warn("web flash not kept", "err", err)
	}
}

// TakeFlash returns and clears the session's message.
func (s *Sessions) TakeFlash(id string) templates.Flash {
	f, err := s.store.TakeFlash(context.Background(), id)
	if err != nil {
		return templates.Flash{}
	}
	return templates.Flash{Kind: f.Kind, Text: f.Text}
}

// setCookie writes the session cookie: HttpOnly, SameSite=Strict, Path=/,
// Secure when the request came over TLS.
func (s *Sessions) setCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: id, Path: "/",
		MaxAge: int(s.ttl / time.Second), HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
}

// clearCookie removes the session cookie from the browser.
func clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode,
	})
}

// randomID returns 32 random bytes as hex.
func randomID() string { return auth.NewSessionID() }
