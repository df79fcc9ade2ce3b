package engine

import (
	"fmt"
	"strings"
)

// MCPWildcard is the tool part of a rule's tool name that names every tool
// of an MCP server: mcp__SERVER__* (docs/configuration.md#mcp-tool-names).
const MCPWildcard = "*"

// SplitMCPTool splits an MCP tool name mcp__SERVER__TOOL into the server
// and the tool: the server is the text up to the first "__" after the
// prefix, the tool all the rest (mcp__a__b__c is server a, tool b__c), as
// IsMCPTool reads it. ok is false for any other name.
func SplitMCPTool(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, "mcp__")
	if !found {
		return "", "", false
	}
	server, tool, found = strings.Cut(rest, "__")
	if !found || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

// mcpServerWildcard reports the server of a rule tool name mcp__SERVER__*.
func mcpServerWildcard(name string) (string, bool) {
	server, tool, ok := SplitMCPTool(name)
	return server, ok && tool == MCPWildcard
}

// checkMCPName reports why a tool name that starts with mcp__ cannot be
// named by a rule: only mcp__SERVER__TOOL and mcp__SERVER__* are
// (docs/configuration.md#mcp-tool-names). A server or tool holding a glob
// character or white space, a missing part, or a * that is not the whole
// tool part would match nothing a gateway sends, or less than the person
// meant, so it is refused rather than read as a literal name.
func checkMCPName(name string) error {
	const forms = "write mcp__SERVER__TOOL for one tool or mcp__SERVER__* for every tool of a server"
	server, tool, ok := SplitMCPTool(name)
	switch {
	case !ok:
		return fmt.Errorf("invalid MCP tool name %q: %s", name, forms)
	case strings.ContainsAny(server, "*?[") || hasSpaceOrControl(server):
		return fmt.Errorf("invalid MCP tool name %q: the server name %q may not hold *, ?, [ or white space; %s", name, server, forms)
	case tool == MCPWildcard:
		return nil
	case strings.ContainsAny(tool, "*?[") || hasSpaceOrControl(tool):
		return fmt.Errorf("invalid MCP tool name %q: only a whole tool part * is a wildcard (mcp__%s__*); %s", name, server, forms)
	}
	return nil
}

// hasSpaceOrControl reports whether s holds an ASCII space or control byte.
func hasSpaceOrControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}
