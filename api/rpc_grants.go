package api

import (
	"encoding/json"
	"net/http"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/service"
)

// approvalDecideParams are the params of approvals.decide: the REST
// decision body and the approval's id.
type approvalDecideParams struct {
	ID string `json:"id"`
	DecisionRequest
}

// rpcApprovalsDecide answers an ask as the caller, with any choice
// (docs/grants.md), as POST /api/v1/approvals/{id}/decision does.
func rpcApprovalsDecide(s *Server, r *http.Request, params json.RawMessage) (any, error) {
	var in approvalDecideParams
	if err := rpcParams(params, &in); err != nil {
		return nil, err
	}
	if in.ID == "" {
		return nil, service.BadRequest("id", "id names the approval to answer")
	}
	ttl, err := in.ttl()
	if err != nil {
		return nil, err
	}
	p, _ := PrincipalFrom(r.Context())
	a, err := s.approvals.DecideFor(r.Context(), p, in.ID, approval.Choice(in.Choice), ttl, in.Comment)
	if err != nil {
		return nil, err
	}
	return approvalView{}.one(a), nil
}

// grantsListParams are the filters of grants.list, as GET /api/v1/grants
// takes them.
type grantsListParams struct {
	Agent     string `json:"agent"`
	SessionID string `json:"session_id"`
	ToolName  string `json:"tool_name"`
}

func rpcGrantsList(s *Server, r *http.Request, params json.RawMessage) (any, error) {
	var in grantsListParams
	if err := rpcParams(params, &in); err != nil {
		return nil, err
	}
	p, _ := PrincipalFrom(r.Context())
	list, err := s.deps.Grants.List(p, service.GrantFilter{Agent: in.Agent, Session: in.SessionID, Tool: in.ToolName})
	if err != nil {
		return nil, err
	}
	return GrantList{Grants: shownGrants(list)}, nil
}

func rpcGrantsRevoke(s *Server, r *http.Request, params json.RawMessage) (any, error) {
	var in idParams
	if err := rpcParams(params, &in); err != nil {
		return nil, err
	}
	p, _ := PrincipalFrom(r.Context())
	g, err := s.deps.Grants.Revoke(r.Context(), p, in.ID)
	if err != nil {
		return nil, err
	}
	return shownGrant(g), nil
}
