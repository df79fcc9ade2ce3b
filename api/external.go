package api

import (
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
)

// ExternalEntryRequest is the body of PUT /api/v1/permissions/external-directory.
type ExternalEntryRequest struct {
	Key   string `json:"key"`
	Level string `json:"level"`
}

// handleGetExternal is GET /api/v1/permissions/external-directory: the
// value as configured (a level or a mapping of prefix -> level), or null.
func (s *Server) handleGetExternal(w http.ResponseWriter, r *http.Request) {
	s.writeSectionView(w, r, func(sec policy.Written) any { return ExternalDirectoryResponse{ExternalDirectory: sec.External} })
}

// handlePutExternal sets one key ("*" or a path prefix) to a level.
func (s *Server) handlePutExternal(w http.ResponseWriter, r *http.Request) {
	var in ExternalEntryRequest
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	if strings.TrimSpace(in.Key) == "" {
		writeError(w, r, service.BadRequest("key", "key is required: \"*\" or a path prefix"))
		return
	}
	if err := checkLevel("level", in.Level); err != nil {
		writeError(w, r, err)
		return
	}
	etag, err := s.policy.SetExternal(ifMatch(r), in.Key, normLevel(in.Level))
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", `"`+etag+`"`)
	s.handleGetExternal(w, r)
}

// handleDeleteExternal removes the key given by the query parameter key.
func (s *Server) handleDeleteExternal(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		writeError(w, r, service.BadRequest("key", "the query parameter key is required"))
		return
	}
	etag, err := s.policy.DeleteExternal(ifMatch(r), key)
	if err != nil {
		writeError(w, r, err)
		return
	}
	setETag(w, etag)
	w.WriteHeader(http.StatusNoContent)
}
