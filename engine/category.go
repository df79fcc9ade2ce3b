package engine

import "strings"

// Category is the kind of tool, which decides how a rule's pattern is matched.
type Category uint8

// The tool categories of docs/decisions.md.
const (
	CategoryUnknown Category = iota
	CategoryShell
	CategoryPath
	CategoryNetwork
)

// String names the category.
func (c Category) String() string {
	switch c {
	case CategoryShell:
		return "shell"
	case CategoryPath:
		return "path"
	case CategoryNetwork:
		return "network"
	}
	return "unknown"
}

// ShellTools, PathTools and NetworkTools are the exact, case-sensitive tool
// names of each category, in the order the spec lists them.
var (
	ShellTools   = []string{"bash", "mcp_exec_command", "create_terminal"}
	PathTools    = []string{"read_file", "write_file", "edit_file", "read_text_file", "write_text_file", "write", "read", "glob_file_search", "glob", "list_dir", "list_files", "grep", "search_replace"}
	NetworkTools = []string{"mcp_fetch_webpage", "mcp_free_search", "mcp_paid_search"}
)

// ToolCategory returns the category of a tool name (case-sensitive).
func ToolCategory(tool string) Category {
	switch tool {
	case "bash", "mcp_exec_command", "create_terminal":
		return CategoryShell
	case "read_file", "write_file", "edit_file", "read_text_file", "write_text_file", "write", "read",
		"glob_file_search", "glob", "list_dir", "list_files", "grep", "search_replace":
		return CategoryPath
	case "mcp_fetch_webpage", "mcp_free_search", "mcp_paid_search":
		return CategoryNetwork
	}
	if IsMCPTool(tool) {
		return CategoryPath
	}
	return CategoryUnknown
}

// IsMCPTool reports whether a tool name is an MCP server's tool as the
// gateway (toolgate mcp) and Claude Code name it: mcp__SERVER__TOOL. Its
// arguments' path values are judged as a path tool's are
// (docs/decisions.md#mcp-tools): the paths it names outside the
// workspace ask, path rules match them, and a rule may name the tool.
func IsMCPTool(tool string) bool {
	rest, ok := strings.CutPrefix(tool, "mcp__")
	if !ok {
		return false
	}
	server, name, ok := strings.Cut(rest, "__")
	return ok && server != "" && name != ""
}
