package web

import (
	"cmp"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/redact"
	"github.com/toolgate/toolgate/store/decisionlog"
	"github.com/toolgate/toolgate/templates"
)

// decisionRow renders one logged decision with what its expanded row
// shows: the reason in words, the trace of the policy in force now for
// the call as logged, and a playground link.
func decisionRow(e decisionlog.Entry, index map[string]ruleMeta, eng *engine.Engine, t translator) templates.DecisionRow {
	row := templates.DecisionRow{ID: e.ID, Time: e.Time.UTC().Format("2006-01-02 15:04:05"), TimeISO: e.Time.UTC().Format(time.RFC3339),
		Source: e.Source, Agent: e.Agent, Tool: e.Tool, Summary: redact.Visible(e.Summary), Channel: e.Channel, Session: e.Session,
		Level: e.Level, MatchedRule: e.MatchedRule, LatencyUS: e.LatencyMicros}
	row.Server, row.ServerTool, _ = engine.SplitMCPTool(e.Tool)
	words := explainRule(e.MatchedRule, e.Tool, index, t)
	row.Reason = words.Reason
	if row.Reason == "" {
		row.Reason = t("why.decided") + " " + e.Level + " (" + cmp.Or(e.MatchedRule, "–") + ")."
	}
	args, ok := rebuildArgs(e.Tool, e.Summary)
	if !ok {
		return row
	}
	if eng != nil {
		d := eng.Evaluate(&engine.Request{Call: engine.NewCall(e.Tool, args), ChannelID: e.Channel, Explain: true})
		row.Trace = stepRows(d.Trace)
		row.Rebuilt = t("why.rebuilt") + " " + d.Level.String() + "."
		// A summary cut at its end, or (an MCP call's JSON) in a value.
		if strings.HasSuffix(e.Summary, "…") || strings.Contains(e.Summary, " more bytes not shown]") {
			row.Rebuilt += " " + t("why.cut")
		}
	}
	row.PlayURL = playURL(e.Tool, e.Channel, args)
	return row
}

// summaryKey finds the key=value pairs of a path tool's logged summary.
var summaryKey = regexp.MustCompile(`(?:^| )([A-Za-z_][A-Za-z0-9_]*)=`)

// rebuildArgs turns a logged summary back into tool arguments, as far as
// it can: a shell tool's command, a path tool's key=value pairs, or JSON.
func rebuildArgs(tool, summary string) (map[string]any, bool) {
	if summary == "" {
		return nil, false
	}
	switch engine.ToolCategory(tool) {
	case engine.CategoryShell:
		return map[string]any{"command": summary}, true
	case engine.CategoryPath:
		locs := summaryKey.FindAllStringSubmatchIndex(summary, -1)
		if len(locs) > 0 && locs[0][0] == 0 {
			args := map[string]any{}
			for i, l := range locs {
				end := len(summary)
				if i+1 < len(locs) {
					end = locs[i+1][0]
				}
				args[summary[l[2]:l[3]]] = summary[l[1]:end]
			}
			return args, true
		}
	}
	var args map[string]any
	if json.Unmarshal([]byte(summary), &args) == nil {
		return args, true
	}
	return nil, false
}

// playURL opens a call in the playground, prefilled (and decided for an
// admin).
func playURL(tool, channel string, args map[string]any) string {
	v := url.Values{"tool": {tool}}
	if channel != "" {
		v.Set("channel", channel)
	}
	if c, ok := args["command"].(string); ok && len(args) == 1 {
		v.Set("command", c)
	} else if b, err := json.Marshal(args); err == nil {
		v.Set("args", string(b))
	}
	return "/playground?" + v.Encode()
}
