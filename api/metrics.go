package api

import (
	"net/http"

	"github.com/toolgate/toolgate/service"
)

// handleMetrics is GET /metrics.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if s.deps.Metrics == nil {
		writeError(w, r, &service.Error{Kind: service.KindUnavailable, Code: service.CodeUnavailable, Message: "metrics are not wired"})
		return
	}
	s.deps.Metrics.ServeHTTP(w, r)
}
