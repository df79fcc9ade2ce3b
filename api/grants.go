package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/redact"
	"github.com/toolgate/toolgate/service"
)

// mountGrants adds GET /api/v1/grants and DELETE /api/v1/grants/{id}
// (docs/grants.md).
func (s *Server) mountGrants(r chi.Router) {
	r.With(require(service.RightApprove)).Get("/grants", s.handleListGrants)
	r.With(require(service.RightApprove)).Delete("/grants/{id}", s.handleRevokeGrant)
}

// GrantList is the body of GET /api/v1/grants.
type GrantList struct {
	Grants []grant.Grant `json:"grants"`
}

// grantQueryParams are the filters of GET /api/v1/grants.
var grantQueryParams = map[string]bool{"agent": true, "session_id": true, "tool_name": true}

// handleListGrants is GET /api/v1/grants?agent=&session_id=&tool_name=:
// the live grants the caller may see, oldest first.
func (s *Server) handleListGrants(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k := range q {
		if !grantQueryParams[k] {
			writeError(w, r, service.BadRequest(k, "unknown query parameter %q (agent, session_id and tool_name filter the list)", k))
			return
		}
	}
	p, _ := PrincipalFrom(r.Context())
	list, err := s.deps.Grants.List(p, service.GrantFilter{Agent: q.Get("agent"), Session: q.Get("session_id"), Tool: q.Get("tool_name")})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, GrantList{Grants: shownGrants(list)})
}

// handleRevokeGrant is DELETE /api/v1/grants/{id}: the grant stops
// deciding on every replica; it answers the grant as it was.
func (s *Server) handleRevokeGrant(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	g, err := s.deps.Grants.Revoke(r.Context(), p, chi.URLParam(r, "id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, shownGrant(g))
}

// shownGrants shows each grant of list (shownGrant), in place.
func shownGrants(list []grant.Grant) []grant.Grant {
	for i := range list {
		list[i] = shownGrant(list[i])
	}
	return list
}

// shownGrant is a grant as it leaves the server: its pattern with secrets
// masked, as arguments are everywhere they are shown.
func shownGrant(g grant.Grant) grant.Grant {
	g.Pattern = redact.Text(g.Pattern)
	g.Summary = redact.Text(g.Summary)
	return g
}
