package api

import (
	"net/http"

	"github.com/toolgate/toolgate/policy"
)

// HealthResponse is the body of GET /healthz.
type HealthResponse struct {
	Status string `json:"status"`
}

// handleHealthz is GET /healthz: the process is up. No auth.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, HealthResponse{Status: "ok"})
}

// ReadyResponse is the body of GET /readyz.
type ReadyResponse struct {
	Status   string           `json:"status"`
	Problems []policy.Problem `json:"problems"`
}

// handleReadyz is GET /readyz: a policy is loaded and deciding; the current
// validation problems are listed (the policy still decides with them).
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	problems := s.deps.Policy.Problems()
	if problems == nil {
		problems = []policy.Problem{}
	}
	status := "ready"
	if len(problems) > 0 {
		status = "ready_with_problems"
	}
	if s.deps.Ready != nil {
		if err := s.deps.Ready(r.Context()); err != nil {
			// Decisions go on from memory; edits and new asks cannot. The
			// cause names the database's user, host and port, which are
			// the operator's: it goes to the log, the reader gets the kind.
			s.deps.Logger.WarnContext(r.Context(), "readyz: storage unavailable", "err", err)
			problems = append(problems, policy.Problem{Path: "storage", Message: storageProblem})
			writeJSON(w, http.StatusServiceUnavailable, ReadyResponse{Status: "storage_unavailable", Problems: problems})
			return
		}
	}
	writeJSON(w, http.StatusOK, ReadyResponse{Status: status, Problems: problems})
}

// storageProblem is what /readyz says of storage it cannot use; the
// server log has the cause.
const storageProblem = "the storage cannot be used (the server log says why): decisions go on with the policy in force, edits and new asks cannot"
