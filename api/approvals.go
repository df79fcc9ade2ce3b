package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/service"
)

// MaxWaitSeconds bounds every long poll (openapi.yaml: 0-600).
const MaxWaitSeconds = 600

// mountApprovals adds /api/v1/check and the approvals routes.
func (s *Server) mountApprovals(r chi.Router) {
	r.With(require(service.RightEvaluate)).Post("/check", s.handleCheck)
	r.With(require(service.RightRead)).Get("/approvals", s.handleListApprovals)
	r.With(requireAny(service.RightRead, service.RightEvaluate)).Get("/approvals/{id}", s.handleGetApproval)
	r.With(require(service.RightApprove)).Post("/approvals/{id}/decision", s.handleDecideApproval)
}

// ApprovalList is the body of GET /api/v1/approvals.
type ApprovalList struct {
	Approvals []approval.Approval `json:"approvals"`
}

// handleListApprovals is GET /api/v1/approvals?status=.
func (s *Server) handleListApprovals(w http.ResponseWriter, r *http.Request) {
	view, err := readApprovalView(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	p, _ := PrincipalFrom(r.Context())
	list, err := s.approvals.List(p, approval.Status(r.URL.Query().Get("status")))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ApprovalList{Approvals: view.list(list)})
}

// waitSeconds reads a wait_seconds query value.
func waitSeconds(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("wait_seconds")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > MaxWaitSeconds {
		return 0, service.BadRequest("wait_seconds", "wait_seconds must be a whole number from 0 to %d", MaxWaitSeconds)
	}
	return time.Duration(n) * time.Second, nil
}

// handleGetApproval is GET /api/v1/approvals/{id}?wait_seconds=: the
// approval, once decided or when the wait runs out.
func (s *Server) handleGetApproval(w http.ResponseWriter, r *http.Request) {
	wait, err := waitSeconds(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	view, err := readApprovalView(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	p, _ := PrincipalFrom(r.Context())
	a, err := s.approvals.Get(r.Context(), p, chi.URLParam(r, "id"), wait)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return // the client went away
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, view.one(a))
}

// DecisionRequest is the body of POST /api/v1/approvals/{id}/decision.
type DecisionRequest struct {
	Choice string `json:"choice"`
	// TTLSeconds is how long an allow_for grant holds (docs/grants.md);
	// only allow_for takes it.
	TTLSeconds *int   `json:"ttl_seconds"`
	Comment    string `json:"comment"`
}

// ttl is the request's ttl_seconds as a duration (service.TTLSeconds, as
// the websocket reads it); a value given with another choice, or out of
// range, is refused by the approvals service.
func (in DecisionRequest) ttl() (time.Duration, error) { return service.TTLSeconds(in.TTLSeconds) }

// handleDecideApproval is POST /api/v1/approvals/{id}/decision. The first
// answer wins; a later one is 409 with the approval as it was resolved.
func (s *Server) handleDecideApproval(w http.ResponseWriter, r *http.Request) {
	var in DecisionRequest
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	ttl, err := in.ttl()
	if err != nil {
		writeError(w, r, err)
		return
	}
	p, _ := PrincipalFrom(r.Context())
	a, err := s.approvals.DecideFor(r.Context(), p, chi.URLParam(r, "id"), approval.Choice(in.Choice), ttl, in.Comment)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, approvalView{}.one(a))
}
