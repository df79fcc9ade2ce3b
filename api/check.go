package api

import (
	"net/http"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
)

// CheckRequest is the body of POST /api/v1/check: an evaluate request plus
// the agent's session and how long to wait for a person.
type CheckRequest struct {
	EvaluateRequest
	SessionID   string `json:"session_id"`
	WaitSeconds *int   `json:"wait_seconds"`
}

// CheckResponse answers a check: allow or deny, or pending with the
// approval to poll or wait on.
type CheckResponse struct {
	Decision string `json:"decision"`
	EvaluateResponse
	Approval *approval.Approval `json:"approval,omitempty"`
}

// handleCheck is POST /api/v1/check (openapi.yaml). allow and deny answer at
// once; ask opens (or joins) an approval, pushes it to browsers, and waits up
// to wait_seconds for the answer.
func (s *Server) handleCheck(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var in CheckRequest
	req, err := decodeEngineCall(w, r, &in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	wait := 0
	if in.WaitSeconds != nil {
		wait = *in.WaitSeconds
		if wait < 0 || wait > MaxWaitSeconds {
			writeError(w, r, service.BadRequest("wait_seconds", "wait_seconds must be from 0 to %d", MaxWaitSeconds))
			return
		}
	}
	from, err := s.restCallerOn(r, in.SessionID, req.ChannelID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// A session grant holds in its session, for the token that asked, only.
	req.SessionID, req.TokenID = in.SessionID, principalToken(r)
	d := s.deps.Policy.Engine().Evaluate(req)
	s.observe(service.SourceCheck, start, req, d, from)
	out := CheckResponse{Decision: d.Level.String(), EvaluateResponse: decisionWire(d)}
	if d.Level != policy.Ask {
		writeJSON(w, http.StatusOK, out)
		return
	}
	asked, err := s.approvals.Ask(r.Context(), principalToken(r), req, d, in.SessionID, from.Agent, time.Duration(wait)*time.Second)
	switch {
	case err != nil:
		writeError(w, r, err)
		return
	case asked.Gone:
		return // the agent went away; the approval stays for others to see
	case asked.Refused:
		// The ask could not be stored: fail closed, saying why.
		out.Decision, out.Reason = policy.Deny.String(), asked.Reason
		writeJSON(w, http.StatusOK, out)
		return
	}
	a := asked.Approval
	out.Decision = "pending"
	if !a.Pending() {
		out.Decision = a.Decision
	}
	a = approvalView{}.one(a)
	out.Approval = &a
	writeJSON(w, http.StatusOK, out)
}
