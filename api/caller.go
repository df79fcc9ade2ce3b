package api

import (
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/decisionlog"
)

// The agents a decision can be logged for (the decision log's agent field).
// The hook routes set their own; the REST decision routes take rest, or
// jiuwenswarm when the client says so in AgentHeader.
const (
	AgentREST        = "rest"
	AgentJiuwenSwarm = "jiuwenswarm"
	AgentClaudeCode  = "claude-code"
	AgentCodex       = "codex"
	AgentGemini      = "gemini"
)

// Agents lists every agent name the decision log may hold (the constants
// above), in the order the decisions page offers them.
var Agents = decisionlog.Agents

// AgentHeader is the request header with which a REST client of
// /api/v1/evaluate, /api/v1/evaluate/batch and /api/v1/check names its
// runtime: "rest" (the default when absent) or "jiuwenswarm". The hook
// agents' names are refused there, so that a REST call is never logged as
// if a hook had made it.
const AgentHeader = "X-Toolgate-Agent"

// Caller says where a decision came from: the agent runtime and its session
// (empty when the route has none). Handlers pass it explicitly to observe,
// with their route's source and the time they started, which makes the
// service.Observation the decision log gets; nothing is read back out of
// the request.
//
// A hook handler passes its own agent and the hook's session_id:
//
//	s.observe(hookSource(in.HookEventName), start, req, d, Caller{Agent: AgentClaudeCode, Session: in.SessionID})
type Caller struct {
	Agent   string
	Session string
}

// restCaller is the caller of a REST decision route: rest, or the agent the
// client names in AgentHeader (only rest or jiuwenswarm), with the session
// the body gives (empty for evaluate).
func restCaller(r *http.Request, session string) (Caller, error) {
	agent := strings.TrimSpace(r.Header.Get(AgentHeader))
	switch agent {
	case "":
		agent = AgentREST
	case AgentREST, AgentJiuwenSwarm:
	default:
		return Caller{}, service.BadRequest(AgentHeader, "%s must be %q or %q, not %q",
			AgentHeader, AgentREST, AgentJiuwenSwarm, agent)
	}
	return Caller{Agent: agent, Session: session}, nil
}
