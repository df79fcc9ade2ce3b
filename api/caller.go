package api

import (
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
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

// restCallerOn is restCaller for a call on channel ch, which the token
// must be allowed to ask for (bindChannel).
func (s *Server) restCallerOn(r *http.Request, session, ch string) (Caller, error) {
	from, err := restCaller(r, session)
	if err != nil {
		return Caller{}, err
	}
	return from, s.bindChannel(r, ch)
}

// bindChannel refuses a call on a channel its token may not ask for
// (docs/decisions.md#channels-bind-the-token): a token limited to some
// channels asks for those only, and only an admin token may name a
// channel the policy does not check, whose calls the engine allows as
// "Skipped for channel" (JiuwenSwarm's own runtimes do that). Without the
// second rule any agent could opt out of every check by naming a channel.
func (s *Server) bindChannel(r *http.Request, ch string) error {
	p, ok := PrincipalFrom(r.Context())
	if !ok {
		return service.Forbidden("", "no principal")
	}
	key := engine.ChannelKey(ch)
	if len(p.Channels) > 0 && !channelListed(p.Channels, key) {
		return service.Forbidden("channel_id", "this token may only ask for the channels %v, not %q", p.Channels, ch)
	}
	if p.Role != auth.RoleAdmin && !s.deps.Policy.Engine().ChecksChannel(ch) {
		return service.Forbidden("channel_id", "the policy does not check channel %q; only an admin token may ask for a channel it skips", ch)
	}
	return nil
}

// channelListed reports whether a token's channel list holds key.
func channelListed(list []string, key string) bool {
	for _, c := range list {
		if engine.ChannelKey(c) == key {
			return true
		}
	}
	return false
}
