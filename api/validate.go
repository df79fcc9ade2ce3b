package api

import (
	"net/http"

	"github.com/toolgate/toolgate/policy"
)

// ValidateResponse is the body of POST /api/v1/permissions/validate.
type ValidateResponse struct {
	Valid    bool             `json:"valid"`
	Problems []policy.Problem `json:"problems"`
}

// handleValidate is POST /api/v1/permissions/validate: dry-run a whole
// permissions section against the built-in rules in force. It writes
// nothing and answers 200 with the problems (none when valid).
func (s *Server) handleValidate(w http.ResponseWriter, r *http.Request) {
	var body policy.Mapping
	if err := decodeJSON(w, r, &body); err != nil {
		writeError(w, r, err)
		return
	}
	sec := body.Written()
	problems := s.policy.Validate(sec)
	if err := checkSection(sec); err != nil && len(problems) == 0 {
		for _, d := range err.Details {
			problems = append(problems, policy.Problem{Path: "permissions." + d.Field, Message: d.Message})
		}
	}
	if problems == nil {
		problems = []policy.Problem{}
	}
	writeJSON(w, http.StatusOK, ValidateResponse{Valid: len(problems) == 0, Problems: problems})
}
