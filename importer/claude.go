package importer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Claude Code's permission rules, as https://code.claude.com/docs/en/permissions
// documents them: permissions.allow, ask and deny hold `Tool` or
// `Tool(specifier)`. Claude Code evaluates deny, then ask, then allow: the
// first list with a matching rule decides, whatever the specificity. That
// is toolgate's strictest-wins among the rules a call meets
// (docs/decisions.md#the-tiered-policy): a deny rule beats any ask or
// allow, an ask beats any allow. Whole-tool entries keep it too (see
// wholeTool).

// Options says where a source's relative paths point.
type Options struct {
	// Project is the project root: Claude Code's /path patterns and
	// relative ones, opencode's path patterns. Empty when unknown (user
	// settings); such patterns are then not carried over.
	Project string
	// Home is the home directory ~/ names.
	Home string
}

// claudeTools are the toolgate tools each Claude Code tool name reaches
// toolgate as through its hook (api/hooks_claude.go). Edit rules apply
// to every tool that edits files and Read rules to the tools that read
// them (Claude Code's documentation, "Read and Edit"), so Edit names the
// write tool too and Read the searches.
var claudeTools = map[string][]string{
	"Bash":         {"bash"},
	"Read":         {"read_file", "glob", "grep", "list_dir"},
	"Edit":         {"edit_file", "write_file"},
	"Write":        {"write_file"},
	"MultiEdit":    {"edit_file"},
	"NotebookEdit": {"edit_file"},
	"Glob":         {"glob"},
	"Grep":         {"grep"},
	"LS":           {"list_dir"},
	"WebFetch":     {"mcp_fetch_webpage"},
	"WebSearch":    {"mcp_free_search"},
}

var claudeEntry = regexp.MustCompile(`^([A-Za-z0-9_.*-]+)(?:\((.*)\))?$`)

// ClaudeCode converts a Claude Code settings.json.
func ClaudeCode(data []byte, opts Options) (*Result, error) {
	var doc struct {
		Permissions map[string]json.RawMessage `json:"permissions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a Claude Code settings file: %w", err)
	}
	r := newResult("claude-code")
	for _, key := range sortedKeys(doc.Permissions) {
		raw := doc.Permissions[key]
		level, isList := map[string]string{"allow": Allow, "ask": Ask, "deny": Deny}[key]
		if !isList {
			r.problem("permissions."+key+": "+string(raw), "%s", claudeSettingReason(key))
			continue
		}
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil {
			r.problem("permissions."+key, "not a list of strings: %v", err)
			continue
		}
		for i, e := range list {
			claudeEntryTo(r, fmt.Sprintf("permissions.%s[%d] %s", key, i, e), e, level, opts)
		}
	}
	return r, nil
}

// claudeSettingReason says why a permissions key other than the three
// lists is not carried over.
func claudeSettingReason(key string) string {
	switch key {
	case "defaultMode":
		return "toolgate has no permission modes; the level of a call no rule names is the policy's tools and defaults"
	case "additionalDirectories":
		return "not a rule: trust a directory in toolgate with `toolgate add-dir DIR`"
	}
	return "not a permission rule list; toolgate has no counterpart"
}

// claudeEntryTo converts one entry of a list.
func claudeEntryTo(r *Result, where, e, level string, opts Options) {
	m := claudeEntry.FindStringSubmatch(strings.TrimSpace(e))
	if m == nil {
		r.problem(where, "not of the form Tool or Tool(specifier)")
		return
	}
	name, spec, hasSpec := m[1], m[2], strings.Contains(e, "(")
	desc := "Claude Code: " + level + " " + e
	idBase := "claude_" + level + "_" + e
	if strings.HasPrefix(name, "mcp__") {
		claudeMCP(r, where, name, hasSpec, level, idBase, desc)
		return
	}
	tools, known := claudeTools[name]
	if hasSpec && (spec == "" || spec == "*") && name == "Bash" {
		hasSpec = false // Bash(*) is Bash
	}
	switch {
	case !hasSpec && known:
		r.wholeTool(tools, level, idBase, desc)
	case !hasSpec && strings.Contains(name, "*"):
		r.problem(where, "a wildcard tool name; toolgate names tools one by one (an MCP server's as mcp__SERVER__*)")
	case !hasSpec:
		// Any other tool reaches toolgate under its own name.
		r.wholeTool([]string{name}, level, idBase, desc)
	case name == "Bash":
		r.addRule(Rule{Tools: tools, MatchType: "command", Pattern: claudeBash(spec), Action: level, Description: desc}, idBase)
	case name == "WebFetch":
		host, ok := strings.CutPrefix(spec, "domain:")
		if !ok || host == "" || strings.ContainsAny(host, "*/ ") {
			r.problem(where, "only WebFetch(domain:HOST) is understood")
			return
		}
		r.addRule(Rule{Tools: tools, MatchType: "args", Pattern: hostRegexp(host), Action: level, Description: desc}, idBase)
	case known && name != "WebSearch":
		pattern, reason := claudePath(spec, level, opts)
		if reason != "" {
			r.problem(where, "%s", reason)
			return
		}
		r.addRule(Rule{Tools: tools, MatchType: "path", Pattern: pattern, Action: level, Description: desc}, idBase)
	default:
		r.problem(where, "toolgate has no rule form for %s's specifier; only the whole tool (%s) can be carried over", name, name)
	}
}

// claudeMCP converts mcp__SERVER, mcp__SERVER__* and mcp__SERVER__TOOL:
// the names toolgate's MCP gateway and Claude Code give a server's tools.
func claudeMCP(r *Result, where, name string, hasSpec bool, level, idBase, desc string) {
	if hasSpec {
		r.problem(where, "MCP tools take no specifier")
		return
	}
	server, tool, hasTool := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__")
	switch {
	case server == "" || strings.Contains(server, "*"):
		r.problem(where, "not an MCP server name")
	case !hasTool || tool == "*":
		r.wholeTool([]string{"mcp__" + server + "__*"}, level, idBase, desc)
	case strings.Contains(tool, "*"):
		r.problem(where, "toolgate names one MCP tool or all of a server's (mcp__SERVER__*), not a part of them")
	default:
		r.wholeTool([]string{name}, level, idBase, desc)
	}
}

// claudeBash is a Bash specifier as a toolgate pattern: the legacy
// prefix form `cmd:*` is `cmd *` (Claude Code's documentation says they
// match the same commands), and Claude Code's * is any run of characters,
// so the rest is shellGlob's reading.
func claudeBash(spec string) string {
	if p, ok := strings.CutSuffix(spec, ":*"); ok {
		spec = p + " *"
	}
	return shellGlob(spec)
}

// claudePath is a Read or Edit specifier, gitignore-style, as a toolgate
// path pattern over the absolute paths Claude Code sends: //path is
// absolute, ~/path under the home, /path under the project root, and a
// relative path under the directory Claude Code runs in, taken to be the
// project root. A slash-free relative pattern (*.env) reads at any depth
// under it in gitignore's rules but at the top only in Claude Code's
// documentation table; a deny or ask takes the wider reading and an
// allow the narrower, so neither allows what Claude Code might not.
// reason says why it cannot be carried over.
func claudePath(spec, level string, opts Options) (pattern, reason string) {
	switch {
	case strings.HasPrefix(spec, "//"):
		return gitignoreRegexp("/", "/"+strings.TrimPrefix(spec, "//")), ""
	case strings.HasPrefix(spec, "~/"):
		if opts.Home == "" {
			return "", "~/ needs the home directory (--home)"
		}
		return gitignoreRegexp(opts.Home, "/"+strings.TrimPrefix(spec, "~/")), ""
	case opts.Project == "":
		return "", "the path is relative to each project's root, and this file names no project: give --project DIR to anchor it to one"
	case strings.HasPrefix(spec, "/"):
		return gitignoreRegexp(opts.Project, spec), ""
	}
	// A relative pattern: gitignore anchors one with a slash inside it to
	// the base; ./ only says "here".
	p, dotSlash := strings.CutPrefix(spec, "./")
	if dotSlash || level == Allow || strings.Contains(strings.TrimSuffix(p, "/"), "/") {
		p = "/" + p
	}
	return gitignoreRegexp(opts.Project, p), ""
}

// ClaudeProject is the project root a settings file names:
// DIR/.claude/settings.json and settings.local.json belong to DIR; the
// user's own ~/.claude/settings.json belongs to no project.
func ClaudeProject(file, home string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(abs)
	if filepath.Base(dir) != ".claude" {
		return ""
	}
	root := filepath.Dir(dir)
	if home != "" && filepath.Clean(home) == root {
		return ""
	}
	return filepath.ToSlash(root)
}
