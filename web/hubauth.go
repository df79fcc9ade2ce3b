package web

import (
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/approval"
)

// HubAuth lets the websocket hub accept a browser session: it adapts
// Sessions to the hub's HubAuthenticator. A bearer-token client is the
// hub's own concern; this only knows cookies.
func (s *Sessions) HubAuth() HubAuthenticator {
	return HubAuthFunc(func(r *http.Request) (HubPrincipal, bool) {
		p, ok := s.SessionPrincipal(r)
		if !ok {
			return HubPrincipal{}, false
		}
		return HubPrincipal{Name: p.Name, Role: p.Role,
			Filter: approval.Filter{Channels: p.Channels, Sessions: p.Sessions}}, true
	})
}

// HubAuthWithTokens lets the hub accept a bearer token as well as a browser
// session. Bearer is set only for a token from the Authorization header, so
// the hub allows a missing Origin only for such non-browser clients.
func (s *Sessions) HubAuthWithTokens(tokens TokenVerifier) HubAuthenticator {
	sessions := s.HubAuth()
	return HubAuthFunc(func(r *http.Request) (HubPrincipal, bool) {
		if tok, ok := bearerToken(r); ok {
			p, valid := tokens.Verify(tok)
			if !valid {
				return HubPrincipal{}, false
			}
			return HubPrincipal{Name: p.Name, Role: p.Role, Bearer: true,
				Filter: approval.Filter{Channels: p.Channels, Sessions: p.Sessions}}, true
		}
		return sessions.Authenticate(r)
	})
}

// bearerToken returns the token of an Authorization: Bearer header.
func bearerToken(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", false
	}
	return strings.TrimSpace(tok), true
}
