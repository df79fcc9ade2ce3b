package api

import (
	"net/http"

	"github.com/toolgate/toolgate/engine"
)

// handleHealthz is GET /healthz: the process is up. No auth.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// ReadyResponse is the body of GET /readyz.
type ReadyResponse struct {
	Status   string           `json:"status"`
	Problems []engine.Problem `json:"problems"`
}

// handleReadyz is GET /readyz: a policy is loaded and deciding; the current
// validation problems are listed (the policy still decides with them).
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	problems := s.deps.Policy.Problems()
	if problems == nil {
		problems = []engine.Problem{}
	}
	status := "ready"
	if len(problems) > 0 {
		status = "ready_with_problems"
	}
	if s.deps.Ready != nil {
		if err := s.deps.Ready(r.Context()); err != nil {
			// Decisions go on from memory; edits and new asks cannot.
			problems = append(problems, engine.Problem{Path: "storage", Message: err.Error()})
			writeJSON(w, http.StatusServiceUnavailable, ReadyResponse{Status: "storage_unavailable", Problems: problems})
			return
		}
	}
	writeJSON(w, http.StatusOK, ReadyResponse{Status: status, Problems: problems})
}
