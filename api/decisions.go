package api

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/engine"
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

// ParseDecisionQuery reads the filters and paging of GET /api/v1/decisions
// (also used by the admin page): tool, server (an MCP server's tools), level, rule (substring), session,
// agent (one of Agents), since and until (RFC 3339), limit (1-500), cursor
// or offset.
func ParseDecisionQuery(v url.Values) (decisionlog.Query, error) {
	for k := range v {
		if !decisionQueryParams[k] {
			return decisionlog.Query{}, badRequest(k, "unknown query parameter %q", k)
		}
	}
	q := decisionlog.Query{Tool: v.Get("tool"), Server: v.Get("server"), Rule: v.Get("rule"), Session: v.Get("session")}
	if lv := v.Get("level"); lv != "" {
		l, ok := engine.ParseLevel(lv)
		if !ok {
			return q, badRequest("level", "level must be allow, ask or deny, not %q", lv)
		}
		q.Level = l.String()
	}
	if a := v.Get("agent"); a != "" {
		if !slices.Contains(Agents, a) {
			return q, badRequest("agent", "agent must be one of %s, not %q", strings.Join(Agents, ", "), a)
		}
		q.Agent = a
	}
	var err error
	if q.Since, err = parseTimeParam(v, "since"); err != nil {
		return q, err
	}
	if q.Until, err = parseTimeParam(v, "until"); err != nil {
		return q, err
	}
	if q.Limit, err = parseIntParam(v, "limit", 1, decisionlog.MaxPage); err != nil {
		return q, err
	}
	offset, err := parseIntParam(v, "offset", 0, 1<<31-1)
	if err != nil {
		return q, err
	}
	q.Offset = offset
	if c := v.Get("cursor"); c != "" {
		n, err := strconv.ParseInt(c, 10, 64)
		if err != nil || n <= 0 {
			return q, badRequest("cursor", "cursor must be a next_cursor of an earlier page")
		}
		if q.Offset > 0 {
			return q, badRequest("offset", "use cursor or offset, not both")
		}
		q.Before = n
	}
	return q, nil
}

func parseTimeParam(v url.Values, name string) (time.Time, error) {
	s := v.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, badRequest(name, "%s must be an RFC 3339 time such as 2025-01-02T15:04:05Z", name)
	}
	return t, nil
}

func parseIntParam(v url.Values, name string, lo, hi int) (int, error) {
	s := v.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, badRequest(name, "%s must be a whole number from %d to %d", name, lo, hi)
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
	page, err := s.deps.Decisions.Query(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := DecisionListResponse{Decisions: make([]DecisionWire, 0, len(page.Entries))}
	for _, e := range page.Entries {
		out.Decisions = append(out.Decisions, decisionToWire(e))
	}
	if page.NextBefore > 0 {
		out.NextCursor = strconv.FormatInt(page.NextBefore, 10)
	}
	writeJSON(w, http.StatusOK, out)
}
