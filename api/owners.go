package api

import (
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/toolgate/toolgate/engine"
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
	if err := s.setOwnerScopes(ifMatch(r), in.OwnerScopes); err != nil {
		writeError(w, r, err)
		return
	}
	s.handleGetOwners(w, r)
}

// setOwnerScopes checks and writes owner scopes (REST and RPC).
func (s *Server) setOwnerScopes(ifMatch string, scopes map[string]any) error {
	if err := checkOwnerScopes(scopes); err != nil {
		return err
	}
	if len(scopes) == 0 {
		scopes = nil
	}
	_, err := s.policy.SetOwnerScopes(ifMatch, scopes)
	return err
}

// checkOwnerScopes checks owner scopes in JiuwenSwarm's shape, keyed by
// channel, then by principal (contract 3 "Digital persona"):
// {<channel>: {<principal_user_id>: {tools: {<tool>: level | {patterns:
// {<pattern>: level}, "*": level}}, defaults: {"*": level}}}}. A scope in
// toolgate's earlier shape ({<principal>: {tools, defaults}}) is refused
// with the fix.
func checkOwnerScopes(scopes map[string]any) *Error {
	for _, ch := range slices.Sorted(maps.Keys(scopes)) {
		field := "owner_scopes." + ch
		principals, ok := scopes[ch].(map[string]any)
		if !ok {
			return badRequest(field, "a channel must be an object of principal user id to scope (owner_scopes.<channel>.<principal>)")
		}
		if earlierOwnerShape(principals) {
			return badRequest(field, "owner scopes are keyed by channel, then principal: %q is a scope in toolgate's earlier shape owner_scopes.<principal>.tools; move it under a channel, e.g. owner_scopes.feishu.%s", ch, ch)
		}
		for _, pid := range slices.Sorted(maps.Keys(principals)) {
			if err := checkOwnerScope(field+"."+pid, principals[pid]); err != nil {
				return err
			}
		}
	}
	return nil
}

// earlierOwnerShape reports whether a channel's object is really a scope
// (it holds tools or defaults objects).
func earlierOwnerShape(m map[string]any) bool {
	for _, k := range []string{"tools", "defaults"} {
		if _, isObj := m[k].(map[string]any); isObj {
			return true
		}
	}
	return false
}

// checkOwnerScope checks the scope of one principal on one channel.
func checkOwnerScope(field string, v any) *Error {
	scope, ok := v.(map[string]any)
	if !ok {
		return badRequest(field, "a scope must be an object with tools and defaults")
	}
	for _, k := range slices.Sorted(maps.Keys(scope)) {
		var err *Error
		switch k {
		case "tools":
			err = checkOwnerTools(field+".tools", scope[k])
		case "defaults":
			err = checkOwnerLevels(field+".defaults", scope[k], true)
		default:
			err = badRequest(field+"."+k, "unknown field %q (allowed: tools, defaults)", k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkOwnerTools checks tools: {<tool>: level | {patterns, "*"}}.
func checkOwnerTools(field string, v any) *Error {
	tools, ok := v.(map[string]any)
	if !ok {
		return badRequest(field, "tools must be an object of tool name to level or {patterns, \"*\"}")
	}
	for _, t := range slices.Sorted(maps.Keys(tools)) {
		tf := field + "." + t
		entry, isObj := tools[t].(map[string]any)
		if !isObj {
			if err := checkOwnerLevel(tf, tools[t]); err != nil {
				return err
			}
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(entry)) {
			switch k {
			case "*":
				if err := checkOwnerLevel(tf+".*", entry[k]); err != nil {
					return err
				}
			case "patterns":
				if err := checkOwnerLevels(tf+".patterns", entry[k], false); err != nil {
					return err
				}
			default:
				return badRequest(tf+"."+k, "unknown field %q (allowed: patterns, \"*\")", k)
			}
		}
	}
	return nil
}

// checkOwnerLevels checks an object of levels: defaults (only "*") or
// patterns (each key a pattern that compiles).
func checkOwnerLevels(field string, v any, onlyStar bool) *Error {
	m, ok := v.(map[string]any)
	if !ok {
		return badRequest(field, "%s must be an object of levels such as {\"*\": \"deny\"}", field)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kf := field + "." + k
		if onlyStar && k != "*" {
			return badRequest(kf, "unknown key %q (only \"*\")", k)
		}
		if !onlyStar {
			kf = field + "['" + k + "']"
			if err := engine.ValidatePattern(k); err != nil {
				return badRequest(kf, "%v", err)
			}
		}
		if err := checkOwnerLevel(kf, m[k]); err != nil {
			return err
		}
	}
	return nil
}

// checkOwnerLevel checks an owner-scope level: exactly allow, ask or deny,
// as the reference compares it (the engine denies any other spelling).
func checkOwnerLevel(field string, v any) *Error {
	switch v {
	case "allow", "ask", "deny":
		return nil
	}
	return badRequest(field, "无效级别 %q，仅允许：allow、ask、deny (field %s; owner-scope levels are lower case)", fmt.Sprint(v), field)
}
