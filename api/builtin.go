package api

import "net/http"

// BuiltinRulesResponse is the body of GET /api/v1/permissions/builtin-rules.
type BuiltinRulesResponse struct {
	// Source is "package" for the embedded default, else the user file's path.
	Source string `json:"source"`
	Rules  []any  `json:"rules"`
}

// handleBuiltinRules is GET /api/v1/permissions/builtin-rules (read only).
func (s *Server) handleBuiltinRules(w http.ResponseWriter, r *http.Request) {
	rules, source := s.deps.Policy.BuiltinRules()
	if rules == nil {
		rules = []any{}
	}
	writeJSON(w, http.StatusOK, BuiltinRulesResponse{Source: source, Rules: rules})
}
