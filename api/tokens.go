package api

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
)

// TokenWire is a token as the API shows it: never its secret or hash.
type TokenWire struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Role     string    `json:"role"`
	Channels []string  `json:"channels,omitempty"`
	Sessions []string  `json:"sessions,omitempty"`
	Created  time.Time `json:"created"`
}

// TokensResponse is GET /api/v1/tokens.
type TokensResponse struct {
	Tokens []TokenWire `json:"tokens"`
}

// CreateTokenRequest is the body of POST /api/v1/tokens.
type CreateTokenRequest struct {
	Name     string   `json:"name"`
	Role     string   `json:"role"`
	Channels []string `json:"channels"`
	Sessions []string `json:"sessions"`
}

// CreateTokenResponse carries the secret, shown this once only.
type CreateTokenResponse struct {
	Token  TokenWire `json:"token"`
	Secret string    `json:"secret"`
}

func tokenWire(t auth.TokenInfo) TokenWire {
	return TokenWire{ID: t.ID, Name: t.Name, Role: t.Role, Channels: t.Channels, Sessions: t.Sessions, Created: t.Created}
}

// handleListTokens is GET /api/v1/tokens (admin).
func (s *Server) handleListTokens(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	list, err := s.tokens.List(p)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]TokenWire, len(list))
	for i, t := range list {
		out[i] = tokenWire(t)
	}
	writeJSON(w, http.StatusOK, TokensResponse{Tokens: out})
}

// handleCreateToken is POST /api/v1/tokens (admin): 201 with the secret.
func (s *Server) handleCreateToken(w http.ResponseWriter, r *http.Request) {
	var in CreateTokenRequest
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	switch in.Role {
	case auth.RoleAdmin, auth.RoleApprover, auth.RoleAgent:
	default:
		writeError(w, r, service.BadRequest("role", "invalid role %q, only admin, approver or agent", in.Role))
		return
	}
	p, _ := PrincipalFrom(r.Context())
	info, secret, err := s.tokens.Create(p, in.Name, in.Role, in.Channels, in.Sessions)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, CreateTokenResponse{Token: tokenWire(info), Secret: secret})
}

// handleRevokeToken is DELETE /api/v1/tokens/{id} (admin).
func (s *Server) handleRevokeToken(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	if err := s.tokens.Revoke(p, chi.URLParam(r, "id")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
