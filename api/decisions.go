package api

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/decisionlog"
)

// DecisionWire is one logged decision on the wire.
type DecisionWire struct {
	ID       int64     `json:"id"`
	Time     time.Time `json:"time"`
	Source   string    `json:"source"`
	Agent    string    `json:"agent"`
	ToolName string    `json:"tool_name"`
	// MCPServer and MCPTool split an MCP tool's name mcp__SERVER__TOOL;
	// absent for other tools.
	MCPServer   string  `json:"mcp_server,omitempty"`
	MCPTool     string  `json:"mcp_tool,omitempty"`
	Summary     string  `json:"summary"`
	ChannelID   string  `json:"channel_id"`
	SessionID   string  `json:"session_id"`
	Level       string  `json:"level"`
	MatchedRule *string `json:"matched_rule"`
	LatencyUS   int64   `json:"latency_us"`
	// ShadowLevel and ShadowRule: what the policy's shadow rules would have
	// decided, when that differs from level.
	ShadowLevel string `json:"shadow_level,omitempty"`
	ShadowRule  string `json:"shadow_rule,omitempty"`
}

// DecisionListResponse is a page of GET /api/v1/decisions.
type DecisionListResponse struct {
	Decisions  []DecisionWire `json:"decisions"`
	NextCursor string         `json:"next_cursor,omitempty"`
}

func decisionToWire(e decisionlog.Entry) DecisionWire {
	w := DecisionWire{ID: e.ID, Time: e.Time, Source: e.Source, Agent: e.Agent, ToolName: e.Tool, Summary: e.Summary,
		ChannelID: e.Channel, SessionID: e.Session, Level: e.Level, LatencyUS: e.LatencyMicros}
	w.MCPServer, w.MCPTool, _ = engine.SplitMCPTool(e.Tool)
	w.ShadowLevel, w.ShadowRule = e.ShadowLevel, e.ShadowRule
	if e.MatchedRule != "" {
		rule := e.MatchedRule
		w.MatchedRule = &rule
	}
	return w
}

// decisionQueryParams are the query parameters of GET /api/v1/decisions.
var decisionQueryParams = map[string]bool{"tool": true, "server": true, "level": true, "rule": true, "session": true, "agent": true,
	"since": true, "until": true, "limit": true, "cursor": true, "offset": true}

// ParseDecisionQuery reads the filters and paging of GET /api/v1/decisions:
// the filters every door shares (service.DecisionFilters), limit (1-500)
// and offset; any other parameter is refused.
func ParseDecisionQuery(v url.Values) (decisionlog.Query, error) {
	for k := range v {
		if !decisionQueryParams[k] {
			return decisionlog.Query{}, service.BadRequest(k, "unknown query parameter %q", k)
		}
	}
	q, err := service.DecisionFilters(v, service.RFC3339)
	if err != nil {
		return q, err
	}
	if q.Limit, err = parseIntParam(v, "limit", 1, decisionlog.MaxPage); err != nil {
		return q, err
	}
	if q.Offset, err = parseIntParam(v, "offset", 0, 1<<31-1); err != nil {
		return q, err
	}
	if q.Before > 0 && q.Offset > 0 {
		return q, service.BadRequest("offset", "use cursor or offset, not both")
	}
	return q, nil
}

func parseIntParam(v url.Values, name string, lo, hi int) (int, error) {
	s := v.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, service.BadRequest(name, "%s must be a whole number from %d to %d", name, lo, hi)
	}
	return n, nil
}

// handleListDecisions is GET /api/v1/decisions.
func (s *Server) handleListDecisions(w http.ResponseWriter, r *http.Request) {
	q, err := ParseDecisionQuery(r.URL.Query())
	if err != nil {
		writeError(w, r, err)
		return
	}
	decisions, next, err := queryWire(r, s.deps.Decisions, q, decisionToWire)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, DecisionListResponse{Decisions: decisions, NextCursor: next})
}

// queryWire runs q on the decision log and returns the page in its wire
// form, in order, and the cursor of the next page ("" on the last).
func queryWire[T any](r *http.Request, log service.DecisionLog, q decisionlog.Query, wire func(decisionlog.Entry) T) ([]T, string, error) {
	page, err := log.Query(r.Context(), q)
	if err != nil {
		return nil, "", err
	}
	out := make([]T, 0, len(page.Entries))
	for _, e := range page.Entries {
		out = append(out, wire(e))
	}
	if page.NextBefore > 0 {
		return out, strconv.FormatInt(page.NextBefore, 10), nil
	}
	return out, "", nil
}
