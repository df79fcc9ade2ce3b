package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/store/auth"
)

// Approvals is the pending-ask manager the check and approvals routes use;
// *approval.Manager satisfies it.
type Approvals interface {
	Create(ctx context.Context, req engine.Request, d engine.Decision, sessionID string) (approval.Approval, bool, error)
	Get(id string) (approval.Approval, error)
	List(filter approval.Filter, status approval.Status) []approval.Approval
	Wait(ctx context.Context, id string, timeout time.Duration) (approval.Approval, error)
	Decide(ctx context.Context, id string, choice approval.Choice, principal, comment string) (approval.Approval, error)
}

// MaxWaitSeconds bounds every long poll (contract 5: 0-600).
const MaxWaitSeconds = 600

func init() {
	errorMappers = append(errorMappers, approvalError)
}

// approvalError maps the approval manager's errors.
func approvalError(err error) *Error {
	switch {
	case errors.Is(err, approval.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "no approval has this id", cause: err}
	case errors.Is(err, approval.ErrAlreadyDecided):
		return &Error{Status: http.StatusConflict, Code: CodeConflict, Message: "this approval was already answered; the first answer stands", cause: err}
	case errors.Is(err, approval.ErrInvalidChoice):
		return badRequest("choice", "choice must be allow_once, allow_always or deny")
	case errors.Is(err, approval.ErrClosed):
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: "the server is shutting down", cause: err}
	case errors.Is(err, approval.ErrNoPersister):
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: "always allow is not available", cause: err}
	}
	return nil
}

// mountApprovals adds /api/v1/check and the approvals routes.
func (s *Server) mountApprovals(r chi.Router) {
	r.With(require(rightEvaluate)).Post("/check", s.handleCheck)
	r.With(require(rightRead)).Get("/approvals", s.handleListApprovals)
	r.With(requireAny(rightRead, rightEvaluate)).Get("/approvals/{id}", s.handleGetApproval)
	r.With(require(rightApprove)).Post("/approvals/{id}/decision", s.handleDecideApproval)
}

// ApprovalList is the body of GET /api/v1/approvals.
type ApprovalList struct {
	Approvals []approval.Approval `json:"approvals"`
}

// handleListApprovals is GET /api/v1/approvals?status=.
func (s *Server) handleListApprovals(w http.ResponseWriter, r *http.Request) {
	status := approval.Status(r.URL.Query().Get("status"))
	if status != "" && !status.Valid() {
		writeError(w, r, badRequest("status", "status must be pending, allowed, denied, expired or cancelled"))
		return
	}
	p, _ := PrincipalFrom(r.Context())
	list := s.deps.Approvals.List(p.ApprovalFilter(), status)
	if list == nil {
		list = []approval.Approval{}
	}
	writeJSON(w, http.StatusOK, ApprovalList{Approvals: list})
}

// waitSeconds reads a wait_seconds query value.
func waitSeconds(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("wait_seconds")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > MaxWaitSeconds {
		return 0, badRequest("wait_seconds", "wait_seconds must be a whole number from 0 to %d", MaxWaitSeconds)
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
	id := chi.URLParam(r, "id")
	a, err := s.deps.Approvals.Get(id)
	if err == nil {
		p, _ := PrincipalFrom(r.Context())
		if p.Role == auth.RoleApprover && !p.ApprovalFilter().Allows(a) {
			err = approval.ErrNotFound
		}
	}
	if err == nil && wait > 0 && a.Pending() {
		a, err = s.deps.Approvals.Wait(r.Context(), id, wait)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return // the client went away
		}
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// DecisionRequest is the body of POST /api/v1/approvals/{id}/decision.
type DecisionRequest struct {
	Choice  string `json:"choice"`
	Comment string `json:"comment"`
}

// handleDecideApproval is POST /api/v1/approvals/{id}/decision. The first
// answer wins; a later one is 409 with the approval as it was resolved.
func (s *Server) handleDecideApproval(w http.ResponseWriter, r *http.Request) {
	var in DecisionRequest
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	choice := approval.Choice(in.Choice)
	if !choice.Valid() {
		writeError(w, r, badRequest("choice", "choice must be allow_once, allow_always or deny"))
		return
	}
	if len(in.Comment) > approval.MaxCommentLen {
		writeError(w, r, badRequest("comment", "comment is longer than %d bytes", approval.MaxCommentLen))
		return
	}
	id := chi.URLParam(r, "id")
	p, _ := PrincipalFrom(r.Context())
	if a, err := s.deps.Approvals.Get(id); err == nil && !p.ApprovalFilter().Allows(a) {
		writeError(w, r, approval.ErrNotFound)
		return
	}
	a, err := s.deps.Approvals.Decide(r.Context(), id, choice, p.Name, in.Comment)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}
