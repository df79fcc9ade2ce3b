package api

import (
	"maps"
	"net/http"
	"slices"
)

// handleGetOwners is GET /api/v1/permissions/owner-scopes.
func (s *Server) handleGetOwners(w http.ResponseWriter, r *http.Request) {
	sec, etag, err := s.section()
	if err != nil {
		writeError(w, r, err)
		return
	}
	scopes, _ := sec["owner_scopes"].(map[string]any)
	if scopes == nil {
		scopes = map[string]any{}
	}
	setETag(w, etag)
	writeJSON(w, http.StatusOK, map[string]any{"owner_scopes": scopes})
}

// OwnerScopesRequest is the body of PUT /api/v1/permissions/owner-scopes.
type OwnerScopesRequest struct {
	OwnerScopes map[string]any `json:"owner_scopes"`
}

// handlePutOwners replaces owner_scopes; an empty object removes it.
func (s *Server) handlePutOwners(w http.ResponseWriter, r *http.Request) {
	var in OwnerScopesRequest
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.setOwnerScopes(in.OwnerScopes); err != nil {
		writeError(w, r, err)
		return
	}
	s.handleGetOwners(w, r)
}

// setOwnerScopes checks and writes owner scopes (REST and RPC).
func (s *Server) setOwnerScopes(scopes map[string]any) error {
	if err := checkOwnerScopes(scopes); err != nil {
		return err
	}
	if len(scopes) == 0 {
		scopes = nil
	}
	_, err := s.deps.Store.SetOwnerScopes(scopes)
	return err
}

// checkOwnerScopes checks {<principal_user_id>: {tools: {<tool>: level},
// defaults: {"*": level}}} (contract D3).
func checkOwnerScopes(scopes map[string]any) *Error {
	for _, uid := range slices.Sorted(maps.Keys(scopes)) {
		field := "owner_scopes." + uid
		scope, ok := scopes[uid].(map[string]any)
		if !ok {
			return badRequest(field, "a scope must be an object with tools and defaults")
		}
		for _, k := range slices.Sorted(maps.Keys(scope)) {
			if k != "tools" && k != "defaults" {
				return badRequest(field+"."+k, "unknown field %q (allowed: tools, defaults)", k)
			}
			if err := checkLevelMap(field+"."+k, scope[k]); err != nil {
				return err
			}
		}
	}
	return nil
}
