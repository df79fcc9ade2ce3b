package engine

// GeminiTools maps Gemini CLI's built-in tool names onto toolgate's: its
// hook reports calls under these names, and its policy files name them.
// read_file, write_file and glob are toolgate's already, and any other
// name, mcp__server__tool included, is kept as it is. The names are the
// *_TOOL_NAME constants of Gemini CLI 0.61.0's bundle (GREP_TOOL_NAME =
// "grep_search", READ_MANY_FILES_TOOL_NAME = "read_many_files", ...) and of
// older releases (search_file_content).
var GeminiTools = map[string]string{
	"run_shell_command":   "bash",
	"replace":             "edit_file",
	"search_file_content": "grep",
	"grep_search":         "grep",
	"read_many_files":     "read_file",
	"list_directory":      "list_dir",
	"web_fetch":           "mcp_fetch_webpage",
	"google_web_search":   "mcp_free_search",
}
