package api

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/toolgate/toolgate/policy"
)

// ToolLevelRequest is the body of PUT /api/v1/permissions/tools/{tool}.
type ToolLevelRequest struct {
	Level string `json:"level"`
}

// toolsOf returns permissions.tools as written (a plain level or a legacy
// mapping per tool), {} when it is not a mapping.
func toolsOf(sec policy.Written) policy.Mapping { return sec.Tools.OrEmpty() }

// handleListTools is GET /api/v1/permissions/tools.
func (s *Server) handleListTools(w http.ResponseWriter, r *http.Request) {
	s.writeSectionView(w, r, func(sec policy.Written) any { return ToolsResponse{Tools: toolsOf(sec)} })
}

// handlePutTool is PUT /api/v1/permissions/tools/{tool}: set its level.
func (s *Server) handlePutTool(w http.ResponseWriter, r *http.Request) {
	tool := strings.TrimSpace(chi.URLParam(r, "tool"))
	var in ToolLevelRequest
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	if err := checkLevel("level", in.Level); err != nil {
		writeError(w, r, err)
		return
	}
	etag, err := s.policy.SetToolLevel(ifMatch(r), tool, normLevel(in.Level))
	if err != nil {
		writeError(w, r, err)
		return
	}
	setETag(w, etag)
	writeJSON(w, http.StatusOK, ToolLevelResponse{Tool: tool, Level: normLevel(in.Level)})
}

// handleDeleteTool is DELETE /api/v1/permissions/tools/{tool}.
func (s *Server) handleDeleteTool(w http.ResponseWriter, r *http.Request) {
	s.deleteEntry(w, r, "tool", s.policy.DeleteTool)
}
