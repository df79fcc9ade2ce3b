package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
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

// session is one signed-in browser, kept only on the server.
type session struct {
	principal auth.Principal
	csrf      string
	expires   time.Time
	flash     templates.Flash
}

// Sessions are the signed-in browsers. The cookie holds a random session
// id; the principal, CSRF token and expiry stay here. Sessions satisfies
// api.SessionAuthenticator. It is safe for concurrent use.
type Sessions struct {
	ttl time.Duration
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*session
	// active, when set, says whether the token a session was signed in with
	// still exists, so that revoking a token ends its sessions at once.
	active func(tokenID string) bool
	// ended, when set, is told after a session is signed out (the hub then
	// closes that session's websockets at once).
	ended func()
}

// OnSignOut makes f be called after each Delete.
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

// NewSessions returns an empty session store; ttl <= 0 means
// DefaultSessionTTL.
func NewSessions(ttl time.Duration) *Sessions {
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	return &Sessions{ttl: ttl, now: time.Now, m: map[string]*session{}}
}

// randomID returns 32 random bytes as hex.
func randomID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// Create starts a session for p and returns its id.
func (s *Sessions) Create(p auth.Principal) string {
	id := randomID()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	s.m[id] = &session{principal: p, csrf: randomID(), expires: s.now().Add(s.ttl)}
	return id
}

// Delete ends a session.
func (s *Sessions) Delete(id string) {
	s.mu.Lock()
	delete(s.m, id)
	ended := s.ended
	s.mu.Unlock()
	if ended != nil {
		ended()
	}
}

// sweepLocked drops expired sessions.
func (s *Sessions) sweepLocked() {
	now := s.now()
	for id, se := range s.m {
		if now.After(se.expires) {
			delete(s.m, id)
		}
	}
}

// lookup returns a copy of the live session of a request and its id.
func (s *Sessions) lookup(r *http.Request) (session, string, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return session{}, "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.liveLocked(c.Value)
	if !ok {
		return session{}, "", false
	}
	return *se, c.Value, true
}

// liveLocked returns session id if it exists, has not expired and its token
// is still active, forgetting it otherwise. s.mu must be held.
func (s *Sessions) liveLocked(id string) (*session, bool) {
	se, ok := s.m[id]
	if !ok {
		return nil, false
	}
	if s.now().After(se.expires) || s.active != nil && !s.active(se.principal.TokenID) {
		delete(s.m, id)
		return nil, false
	}
	return se, true
}

// valid reports whether session id still holds (see liveLocked).
func (s *Sessions) valid(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.liveLocked(id)
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
	s.mu.Lock()
	se, ok := s.m[id]
	s.mu.Unlock()
	return ok && token != "" && subtle.ConstantTimeCompare([]byte(se.csrf), []byte(token)) == 1
}

// SetFlash keeps a message to show on the session's next page.
func (s *Sessions) SetFlash(id string, f templates.Flash) {
	s.mu.Lock()
	if se, ok := s.m[id]; ok {
		se.flash = f
	}
	s.mu.Unlock()
}

// TakeFlash returns and clears the session's message.
func (s *Sessions) TakeFlash(id string) templates.Flash {
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.m[id]
	if !ok {
		return templates.Flash{}
	}
	f := se.flash
	se.flash = templates.Flash{}
	return f
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
