package service

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store/decisionlog"
)

// DecisionFilters reads the decision log's filters shared by
// GET /api/v1/decisions and the decisions page: tool, server (an MCP
// server's tools), rule (a substring), session, agent (one of
// decisionlog.Agents), level, since and until (read by readTime: the API
// takes RFC 3339, the page also its date picker's format) and cursor (a
// next_cursor of an earlier page). A bad value is a BadRequest naming its
// parameter, which the page words in its own language from Field(). Paging
// sizes and parameters of one door alone are that door's to read.
func DecisionFilters(v url.Values, readTime func(string) (time.Time, error)) (decisionlog.Query, error) {
	q := decisionlog.Query{Tool: v.Get("tool"), Server: v.Get("server"), Rule: v.Get("rule"), Session: v.Get("session")}
	if a := v.Get("agent"); a != "" {
		if !slices.Contains(decisionlog.Agents, a) {
			return q, BadRequest("agent", "agent must be one of %s, not %q", strings.Join(decisionlog.Agents, ", "), a)
		}
		q.Agent = a
	}
	if lv := v.Get("level"); lv != "" {
		l, ok := policy.ParseLevel(lv)
		if !ok {
			return q, BadRequest("level", "level must be allow, ask or deny, not %q", lv)
		}
		q.Level = l.String()
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"since", &q.Since}, {"until", &q.Until}} {
		if s := v.Get(f.name); s != "" {
			at, err := readTime(s)
			if err != nil {
				return q, BadRequest(f.name, "%s must be an RFC 3339 time such as 2025-01-02T15:04:05Z", f.name)
			}
			*f.dst = at
		}
	}
	if c := v.Get("cursor"); c != "" {
		n, err := strconv.ParseInt(c, 10, 64)
		if err != nil || n <= 0 {
			return q, BadRequest("cursor", "cursor must be a next_cursor of an earlier page")
		}
		q.Before = n
	}
	return q, nil
}

// RFC3339 reads an RFC 3339 time, DecisionFilters' readTime for the API.
func RFC3339(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }
