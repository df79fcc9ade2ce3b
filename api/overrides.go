package api

import (
	"net/http"

	"github.com/toolgate/toolgate/policy"
)

// handleListOverrides is GET /api/v1/permissions/approval-overrides.
func (s *Server) handleListOverrides(w http.ResponseWriter, r *http.Request) {
	s.writeSectionView(w, r, func(sec policy.Written) any { return OverridesResponse{ApprovalOverrides: sec.Overrides.All()} })
}

// handleAddOverride is POST /api/v1/permissions/approval-overrides: 201;
// 409 when the id is taken.
func (s *Server) handleAddOverride(w http.ResponseWriter, r *http.Request) {
	s.createEntry(w, r, listOverrides, s.policy.AddOverride)
}

// handleDeleteOverride is DELETE /api/v1/permissions/approval-overrides/{id}.
func (s *Server) handleDeleteOverride(w http.ResponseWriter, r *http.Request) {
	s.deleteEntry(w, r, "id", s.policy.DeleteOverride)
}
