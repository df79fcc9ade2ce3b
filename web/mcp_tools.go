package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/store/decisionlog"
	"github.com/toolgate/toolgate/templates"
)

// mcpSeenCalls is how many of the newest logged MCP calls the pages read
// for the MCP tools they offer.
const mcpSeenCalls = 500

// mcpToolsSeen lists the MCP tools (mcp__SERVER__TOOL) the decision log's
// newest MCP calls and the asks waiting for a person name, sorted, each
// once: the pages offer them in their tool lists, so that a person writes
// a rule for the name the gateway sends. A log that cannot be read offers
// none.
func (u *UI) mcpToolsSeen(r *http.Request) []string {
	var seen []string
	add := func(tool string) {
		if engine.IsMCPTool(tool) && !slices.Contains(seen, tool) {
			seen = append(seen, tool)
		}
	}
	if u.decisions != nil {
		page, err := u.decisions.Query(r.Context(), decisionlog.Query{ToolPrefix: "mcp__", Limit: mcpSeenCalls})
		if err != nil {
			u.deps.Logger.Warn("MCP tools seen", "err", err)
		}
		for _, e := range page.Entries {
			add(e.Tool)
		}
	}
	if u.approvals.Available() {
		pending, _ := u.approvals.List(currentFrom(r.Context()).sess.principal, approval.StatusPending)
		for _, a := range pending {
			add(a.Request.ToolName)
		}
	}
	slices.Sort(seen)
	return seen
}

// toolOptions are the choices of a tool list: the known tools, then, for
// each MCP server seen, every tool of it (mcp__SERVER__*) and each tool
// seen, labelled with the server's name.
func toolOptions(mcpSeen []string, t translator) []templates.ToolOption {
	var out []templates.ToolOption
	for _, name := range knownTools() {
		out = append(out, templates.ToolOption{Value: name})
	}
	last := ""
	for _, tool := range mcpSeen {
		server, name, _ := engine.SplitMCPTool(tool)
		if server != last {
			out = append(out, templates.ToolOption{Value: "mcp__" + server + "__" + engine.MCPWildcard,
				Label: t.f("tools.mcpevery", server)})
			last = server
		}
		if name != engine.MCPWildcard {
			out = append(out, templates.ToolOption{Value: tool, Label: t.f("tools.mcpone", server, name)})
		}
	}
	return out
}

// mcpRows adds a row for each MCP tool seen that is not configured and
// keeps the MCP rows sorted by name among themselves (the page groups rows
// by category, in their order).
func mcpRows(rows []templates.ToolRow, mcpSeen []string) []templates.ToolRow {
	for _, tool := range mcpSeen {
		if !slices.ContainsFunc(rows, func(r templates.ToolRow) bool { return r.Name == tool }) {
			rows = append(rows, templates.ToolRow{Name: tool, Category: categoryName(tool)})
		}
	}
	var at []int
	var mcp []templates.ToolRow
	for i, r := range rows {
		if r.Category == "mcp" {
			at, mcp = append(at, i), append(mcp, r)
		}
	}
	slices.SortFunc(mcp, func(a, b templates.ToolRow) int { return strings.Compare(a.Name, b.Name) })
	for j, i := range at {
		rows[i] = mcp[j]
	}
	return rows
}
