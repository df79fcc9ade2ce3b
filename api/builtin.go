package api

import (
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
)

// BuiltinRulesResponse is the body of GET /api/v1/permissions/builtin-rules.
type BuiltinRulesResponse struct {
	// Source is "package" for the embedded default, else the user file's path.
	Source string `json:"source"`
	Rules  []any  `json:"rules"`
}

// handleBuiltinRules is GET /api/v1/permissions/builtin-rules.
func (s *Server) handleBuiltinRules(w http.ResponseWriter, r *http.Request) {
	rules, source := s.deps.Policy.BuiltinRules()
	if rules == nil {
		rules = []any{}
	}
	writeJSON(w, http.StatusOK, BuiltinRulesResponse{Source: source, Rules: rules})
}

// handlePutBuiltinRules is PUT /api/v1/permissions/builtin-rules (write
// right): the body is the text of builtin_rules.yaml (YAML or JSON, a
// mapping with a rules list; GET's answer is one). A list with problems is
// 400 naming each field and nothing is written. The list has no ETag, so an
// If-Match other than "*" is refused rather than silently not checked.
func (s *Server) handlePutBuiltinRules(w http.ResponseWriter, r *http.Request) {
	if tag := strings.TrimSpace(ifMatch(r)); tag != "" && tag != "*" {
		writeError(w, r, service.BadRequest("If-Match", "the built-in rule list has no ETag; send the request without If-Match"))
		return
	}
	buf, err := readBody(w, r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	text := append([]byte(nil), buf.Bytes()...)
	releaseBody(buf)
	if err := s.policy.SetBuiltin(r.Context(), s.builtinWriter(), text); err != nil {
		writeError(w, r, err)
		return
	}
	s.handleBuiltinRules(w, r)
}

// builtinWriter is where the built-in list is stored: the document source
// (the policy store's backend: the config dir or PostgreSQL), else the
// policy store's own backend; nil when neither can write it.
func (s *Server) builtinWriter() service.BuiltinWriter {
	if bw, ok := s.deps.Documents.(service.BuiltinWriter); ok {
		return bw
	}
	if b, ok := s.deps.Policy.(interface{ Backend() store.Backend }); ok {
		if bw, ok := b.Backend().(service.BuiltinWriter); ok {
			return bw
		}
	}
	return nil
}
