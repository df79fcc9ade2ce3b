package web

import (
	"net/http"

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
