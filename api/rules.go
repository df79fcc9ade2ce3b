package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
)

// listOf returns one of the entry lists of the section by its key (rules,
// approval_overrides).
func listOf(sec policy.Written, key string) policy.List {
	if key == listOverrides {
		return sec.Overrides
	}
	return sec.Rules
}

// The keys of the section's entry lists.
const (
	listRules     = "rules"
	listOverrides = "approval_overrides"
)

// handleListRules is GET /api/v1/permissions/rules.
func (s *Server) handleListRules(w http.ResponseWriter, r *http.Request) {
	s.writeSectionView(w, r, func(sec policy.Written) any { return RulesResponse{Rules: sec.Rules.All()} })
}

// handleGetRule is GET /api/v1/permissions/rules/{id}.
func (s *Server) handleGetRule(w http.ResponseWriter, r *http.Request) {
	sec, etag, err := s.section()
	if err != nil {
		writeError(w, r, err)
		return
	}
	id := chi.URLParam(r, "id")
	rule, ok := sec.Rules.Find(id)
	if !ok {
		writeError(w, r, store.Refuse(store.ErrNotFound, "rule %q: not found", id))
		return
	}
	setETag(w, etag)
	writeJSON(w, http.StatusOK, rule)
}

// handleCreateRule is POST /api/v1/permissions/rules: 201 with the rule;
// 409 when its id is taken. A rule without an id gets service.NewID's.
func (s *Server) handleCreateRule(w http.ResponseWriter, r *http.Request) {
	s.createEntry(w, r, listRules, s.policy.CreateRule)
}

// createEntry answers a POST of a new entry of list (rules or
// approval_overrides): the body decoded as an entry, written by create, and
// 201 with the entry as written.
func (s *Server) createEntry(w http.ResponseWriter, r *http.Request, list string, create func(ifMatch string, entry policy.Rule) (id, etag string, err error)) {
	entry, err := decodeEntry(w, r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	id, etag, err := create(ifMatch(r), entry)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.respondEntry(w, r, list, id, etag, http.StatusCreated)
}

// decodeEntry reads, checks and decodes a new rule or override; one
// without an id gets the service's (service.NewID) when it is written.
func decodeEntry(w http.ResponseWriter, r *http.Request) (policy.Rule, error) {
	var body policy.Mapping
	if err := decodeJSON(w, r, &body); err != nil {
		return policy.Rule{}, err
	}
	if !body.IsMapping() {
		return policy.Rule{}, service.BadRequest("", "the body must be a JSON object")
	}
	entry, err := decodeRule(body)
	if err != nil {
		return policy.Rule{}, err
	}
	return entry, nil
}

// respondEntry answers with the entry of list now on disk.
func (s *Server) respondEntry(w http.ResponseWriter, r *http.Request, list, id, etag string, status int) {
	sec, _, err := s.section()
	if err != nil {
		writeError(w, r, err)
		return
	}
	entry, ok := listOf(sec, list).Find(id)
	if !ok {
		writeError(w, r, store.Refuse(store.ErrNotFound, "%s id %q after the write: not found", list, id))
		return
	}
	setETag(w, etag)
	writeJSON(w, status, entry)
}

// handlePatchRule is PATCH /api/v1/permissions/rules/{id}: each key given
// is set, null removes it; an id in the body renames the rule.
func (s *Server) handlePatchRule(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	var patch policy.Mapping
	if err := decodeJSON(w, r, &patch); err != nil {
		writeError(w, r, err)
		return
	}
	if len(patch.Keys) == 0 {
		writeError(w, r, service.BadRequest("", "the body must be an object with at least one field"))
		return
	}
	change, perr := decodeRulePatch(patch)
	if perr != nil {
		writeError(w, r, perr)
		return
	}
	etag, err := s.policy.UpdateRule(ifMatch(r), id, change)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if newID, ok := change.NewID(); ok {
		id = newID
	}
	s.respondEntry(w, r, listRules, id, etag, http.StatusOK)
}

// handleDeleteRule is DELETE /api/v1/permissions/rules/{id}.
func (s *Server) handleDeleteRule(w http.ResponseWriter, r *http.Request) {
	s.deleteEntry(w, r, "id", s.policy.DeleteRule)
}
