package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/toolgate/toolgate/store/decisionlog"
)

// ShadowWire is one logged call a shadow rule would have decided otherwise
// (GET /api/v1/shadow).
type ShadowWire struct {
	RuleID      string    `json:"rule_id"`
	ToolName    string    `json:"tool_name"`
	Summary     string    `json:"summary"`
	Level       string    `json:"level"`
	ShadowLevel string    `json:"shadow_level"`
	ShadowRule  string    `json:"shadow_rule"`
	At          time.Time `json:"at"`
}

// ShadowListResponse is a page of GET /api/v1/shadow.
type ShadowListResponse struct {
	Calls      []ShadowWire `json:"calls"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

// handleListShadow is GET /api/v1/shadow: the logged calls that the
// policy's shadow rules would have decided otherwise, newest first, with
// the decision log's filters (tool, session, since, until, limit, cursor)
// and rule_id (the shadow rule's id).
func (s *Server) handleListShadow(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	rule := v.Get("rule_id")
	v.Del("rule_id")
	q, err := ParseDecisionQuery(v)
	if err != nil {
		writeError(w, r, err)
		return
	}
	q.Shadowed, q.ShadowRule = true, rule
	calls, next, err := queryWire(r, s.deps.Decisions, q, shadowToWire)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ShadowListResponse{Calls: calls, NextCursor: next})
}

// shadowToWire turns a logged call with a shadow outcome into its wire
// form; the rule is the first rule id its shadow matched_rule names.
func shadowToWire(e decisionlog.Entry) ShadowWire {
	return ShadowWire{RuleID: FirstRuleID(e.ShadowRule), ToolName: e.Tool, Summary: e.Summary, Level: e.Level,
		ShadowLevel: e.ShadowLevel, ShadowRule: e.ShadowRule, At: e.Time}
}

// FirstRuleID is the id inside the first "rules[...]" of a matched_rule
// ("" when there is none).
func FirstRuleID(matched string) string {
	i := strings.Index(matched, "rules[")
	if i < 0 {
		return ""
	}
	rest := matched[i+len("rules["):]
	j := strings.IndexByte(rest, ']')
	if j < 0 {
		return ""
	}
	return rest[:j]
}
