package web

import (
	"net/http"

	"github.com/toolgate/toolgate/store/auth"
)

// HubAuth lets the websocket hub accept a browser session: it adapts
// Sessions to the hub's HubAuthenticator. HubAuthWithTokens adds bearer
// tokens.
func (s *Sessions) HubAuth() HubAuthenticator {
	return HubAuthFunc(func(r *http.Request) (HubPrincipal, bool) {
		se, id, ok := s.lookup(r)
		if !ok {
			return HubPrincipal{}, false
		}
		return HubPrincipal{Principal: se.principal,
			Valid: func() bool { return s.valid(id) }}, true
	})
}

// HubAuthWithTokens lets the hub accept a bearer token as well as a browser
// session. Bearer is set only for a token from the Authorization header, so
// the hub allows a missing Origin only for such non-browser clients.
func (s *Sessions) HubAuthWithTokens(tokens TokenVerifier) HubAuthenticator {
	sessions := s.HubAuth()
	return HubAuthFunc(func(r *http.Request) (HubPrincipal, bool) {
		if tok, ok := auth.BearerToken(r.Header.Get("Authorization")); ok {
			p, valid := tokens.Verify(tok)
			if !valid {
				return HubPrincipal{}, false
			}
			return HubPrincipal{Principal: p, Bearer: true,
				Valid: func() bool { _, ok := tokens.Verify(tok); return ok }}, true
		}
		return sessions.Authenticate(r)
	})
}
