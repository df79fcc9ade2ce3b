package api

import (
	"net/http"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
)

// handleGetOwners is GET /api/v1/permissions/owner-scopes.
func (s *Server) handleGetOwners(w http.ResponseWriter, r *http.Request) {
	scopes, etag, err := s.policy.OwnerScopes()
	if err != nil {
		writeError(w, r, err)
		return
	}
	setETag(w, etag)
	writeJSON(w, http.StatusOK, OwnerScopesResponse{OwnerScopes: scopes})
}

// OwnerScopesRequest is the body of PUT /api/v1/permissions/owner-scopes
// and the params of permissions.owner_scopes.set.
type OwnerScopesRequest struct {
	OwnerScopes policy.Mapping `json:"owner_scopes"`
}

// handlePutOwners replaces owner_scopes; an empty object removes it.
func (s *Server) handlePutOwners(w http.ResponseWriter, r *http.Request) {
	var in OwnerScopesRequest
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.setOwnerScopes(ifMatch(r), in.OwnerScopes); err != nil {
		writeError(w, r, err)
		return
	}
	s.handleGetOwners(w, r)
}

// setOwnerScopes decodes owner scopes strictly and writes them (REST and
// RPC alike).
func (s *Server) setOwnerScopes(ifMatch string, raw policy.Mapping) error {
	scopes, err := decodeOwnerScopes(raw)
	if err != nil {
		return err
	}
	_, werr := s.policy.SetOwnerScopes(ifMatch, scopes)
	return werr
}

// decodeOwnerScopes is policy.DecodeOwnerScopesInput with the engine's
// pattern check, its refusal a 400 naming the field.
func decodeOwnerScopes(raw policy.Mapping) (policy.OwnerScopes, *service.Error) {
	scopes, fe := policy.DecodeOwnerScopesInput(raw, engine.ValidatePattern)
	return scopes, fieldError(fe)
}
