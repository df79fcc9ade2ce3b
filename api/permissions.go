package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
)

// mountPermissions adds the policy routes under /api/v1 (openapi.yaml).
func (s *Server) mountPermissions(r chi.Router) {
	read, write := r.With(require(service.RightRead)), r.With(require(service.RightWrite))
	read.Get("/permissions", s.handleGetSection)
	read.Get("/permissions/export", s.handleExport)
	write.Put("/permissions", s.handlePutSection)
	read.Get("/permissions/settings", s.handleGetSettings)
	write.Patch("/permissions/settings", s.handlePatchSettings)
	read.Get("/permissions/tools", s.handleListTools)
	write.Put("/permissions/tools/{tool}", s.handlePutTool)
	write.Delete("/permissions/tools/{tool}", s.handleDeleteTool)
	read.Get("/permissions/rules", s.handleListRules)
	write.Post("/permissions/rules", s.handleCreateRule)
	read.Get("/permissions/rules/{id}", s.handleGetRule)
	write.Patch("/permissions/rules/{id}", s.handlePatchRule)
	write.Delete("/permissions/rules/{id}", s.handleDeleteRule)
	read.Get("/permissions/approval-overrides", s.handleListOverrides)
	write.Post("/permissions/approval-overrides", s.handleAddOverride)
	write.Delete("/permissions/approval-overrides/{id}", s.handleDeleteOverride)
	read.Get("/permissions/external-directory", s.handleGetExternal)
	write.Put("/permissions/external-directory", s.handlePutExternal)
	write.Delete("/permissions/external-directory", s.handleDeleteExternal)
	read.Get("/permissions/owner-scopes", s.handleGetOwners)
	write.Put("/permissions/owner-scopes", s.handlePutOwners)
	read.Get("/permissions/builtin-rules", s.handleBuiltinRules)
	write.Put("/permissions/builtin-rules", s.handlePutBuiltinRules)
	read.Post("/permissions/validate", s.handleValidate)
	write.Get("/tokens", s.handleListTokens)
	write.Post("/tokens", s.handleCreateToken)
	write.Delete("/tokens/{id}", s.handleRevokeToken)
	read.Post("/commands", s.handleCommand)
}

// section returns the section in force as written.
func (s *Server) section() (policy.Written, string, error) {
	return s.policy.Section()
}

// ifMatch is the If-Match header of a write ("" when absent): every write
// route honours it, answering 412 when the section changed since.
func ifMatch(r *http.Request) string { return r.Header.Get("If-Match") }

// writeSectionView answers a read of the section or a part of it: what
// view makes of the section in force, with the section's ETag, so a later
// write may send it back as If-Match.
func (s *Server) writeSectionView(w http.ResponseWriter, r *http.Request, view func(policy.Written) any) {
	sec, etag, err := s.section()
	if err != nil {
		writeError(w, r, err)
		return
	}
	setETag(w, etag)
	writeJSON(w, http.StatusOK, view(sec))
}

// deleteEntry answers a DELETE of the section's entry that the route's
// parameter key names: 204 with the section's new ETag.
func (s *Server) deleteEntry(w http.ResponseWriter, r *http.Request, key string, del func(ifMatch, name string) (string, error)) {
	etag, err := del(ifMatch(r), chi.URLParam(r, key))
	if err != nil {
		writeError(w, r, err)
		return
	}
	setETag(w, etag)
	w.WriteHeader(http.StatusNoContent)
}

// setETag sets the ETag header of the section.
func setETag(w http.ResponseWriter, etag string) {
	if etag != "" {
		w.Header().Set("ETag", `"`+etag+`"`)
	}
}

// handleGetSection is GET /api/v1/permissions: the whole section, with its ETag.
func (s *Server) handleGetSection(w http.ResponseWriter, r *http.Request) {
	s.writeSectionView(w, r, func(sec policy.Written) any { return sec })
}

// handlePutSection is PUT /api/v1/permissions: replace the section; with
// If-Match, only when it has not changed since that ETag (else 412).
func (s *Server) handlePutSection(w http.ResponseWriter, r *http.Request) {
	var body policy.Mapping
	if err := decodeJSON(w, r, &body); err != nil {
		writeError(w, r, err)
		return
	}
	if !body.IsMapping() {
		writeError(w, r, service.BadRequest("", "the body must be a JSON object (the permissions section)"))
		return
	}
	sec := body.Written()
	if err := checkSection(sec); err != nil {
		writeError(w, r, err)
		return
	}
	etag, err := s.policy.ReplaceSection(ifMatch(r), sec)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.respondSection(w, r, etag)
}

// respondSection answers a write with the section now in force.
func (s *Server) respondSection(w http.ResponseWriter, r *http.Request, etag string) {
	sec, _, err := s.section()
	if err != nil {
		writeError(w, r, err)
		return
	}
	setETag(w, etag)
	writeJSON(w, http.StatusOK, sec)
}

// handleExport is GET /api/v1/permissions/export: the section as a
// config.yaml document (`permissions:` at the top level, comments kept).
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	text, err := s.policy.Export(r.Context(), s.deps.Documents)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// No ETag: the text comes from storage, which may be newer than the
	// policy in force here, and an ETag of one with the text of the other
	// would only earn a 412 later.
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(text)
}
