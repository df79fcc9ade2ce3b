package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// `toolgate setup <agent> --mcp` puts `toolgate mcp` in front of every
// stdio MCP server the agent already has configured, so that each of
// their tools/call is decided as mcp__NAME__TOOL (docs/agents.md#wrapping-an-agents-mcp-servers).
// It is a flag of its own, not part of the hooks' setup: it edits other
// files than the hooks (~/.claude.json, Codex's config.toml), and with the
// hooks in place too an MCP call the policy asks about is asked twice.

// tokenEnv is the variable the gateway reads its agent token from.
const tokenEnv = "TOOLGATE_TOKEN"

// mcpWrap is how a wrapped server runs toolgate.
type mcpWrap struct {
	bin       string
	url       string
	tokenFile string
	wait      int // -1: toolgate mcp's own default
}

// wrapOptions is the wrapping setup's flags make.
func wrapOptions(o setupOptions) mcpWrap {
	return mcpWrap{bin: o.bin, url: o.url, tokenFile: o.tokenFile, wait: o.wait}
}

// args is the wrapped server's argument list: the gateway's flags, then
// the server's own command line after --.
func (w mcpWrap) args(name, command string, args []string) []string {
	out := []string{"mcp", "--name", name, "--url", w.url}
	if w.tokenFile != "" {
		out = append(out, "--token-file", w.tokenFile)
	}
	if w.wait >= 0 {
		out = append(out, "--wait", strconv.Itoa(w.wait))
	}
	out = append(out, "--", command)
	return append(out, args...)
}

// isGateway tells a server command that already runs `toolgate mcp ...
// -- SERVER`: this toolgate (--bin) or any program named toolgate*, with
// mcp first and a -- before the server's command.
func (w mcpWrap) isGateway(command string, args []string) bool {
	if len(args) == 0 || args[0] != "mcp" || gatewaySplit(args) < 0 {
		return false
	}
	return command == w.bin || strings.HasPrefix(filepath.Base(command), "toolgate")
}

// gatewaySplit is the index of the -- that ends the gateway's flags, or -1.
func gatewaySplit(args []string) int {
	for i, a := range args {
		if a == "--" {
			return i
		}
	}
	return -1
}

// unwrapped is the server's own command line inside a gateway's arguments.
func unwrapped(args []string) (string, []string, bool) {
	i := gatewaySplit(args)
	if i < 0 || i+1 >= len(args) {
		return "", nil, false
	}
	return args[i+1], append([]string{}, args[i+2:]...), true
}

// mcpOutcome is what setup did, or would do, to one server entry.
type mcpOutcome struct {
	where  string // the entry inside its file, as the person would find it
	action string // wrapped, unwrapped, kept, not wrapped
	reason string
	before []string // command lines, when changed
	after  []string
	gated  bool // the server runs behind the gateway once the file is written
}

// changed tells an outcome that rewrites the entry.
func (m mcpOutcome) changed() bool { return m.action == "wrapped" || m.action == "unwrapped" }

// mcpFileReport is the outcome of one file.
type mcpFileReport struct {
	path     string
	outcomes []mcpOutcome
	extra    []string // other changes, in words (an env allowance)
}

// decideServer is the one rule of every agent's format: given an entry's
// command line (or its remote URL), what wrapping or unwrapping does.
func decideServer(w mcpWrap, remove bool, where, name, command string, args []string, remote string) mcpOutcome {
	out := mcpOutcome{where: where}
	switch {
	case remote != "":
		out.action = "not wrapped"
		if !remove {
			out.reason = "a remote server (" + remote + "): setup wraps only the servers it starts itself; " +
				"`toolgate mcp --upstream URL --listen ADDR` can be put in front of it by hand"
		} else {
			out.reason = "a remote server (" + remote + ")"
		}
	case command == "":
		out.action, out.reason = "not wrapped", "it names no command to start"
	case w.isGateway(command, args) && remove:
		inner, innerArgs, ok := unwrapped(args)
		if !ok {
			out.action, out.reason = "not wrapped", "it runs toolgate mcp with no server command after --: fix it by hand"
			out.gated = true
			return out
		}
		out.action = "unwrapped"
		out.before = append([]string{command}, args...)
		out.after = append([]string{inner}, innerArgs...)
	case w.isGateway(command, args):
		out.action, out.reason = "kept", "already behind toolgate mcp (its flags are left as they are)"
		out.gated = true
	case remove:
		out.action, out.reason = "kept", "not behind toolgate mcp"
	default:
		out.action, out.gated = "wrapped", true
		out.before = append([]string{command}, args...)
		out.after = append([]string{w.bin}, w.args(name, command, args)...)
	}
	return out
}

// runSetupMCP wraps (or with --remove unwraps) the MCP servers of every
// file the agent reads them from. Every file is read and edited in memory
// first: if one cannot be read exactly, none is written, and the error
// says why.
func runSetupMCP(agent string, o setupOptions, stdout io.Writer, getenv func(string) string) error {
	files, err := mcpFiles(agent, o.project, getenv)
	if err != nil {
		return err
	}
	w := wrapOptions(o)
	var plans []mcpPlan
	var paths []string
	for _, f := range files {
		p, err := planMCPFile(agent, f, w, o.remove)
		if err != nil {
			return fmt.Errorf("%s: %w; no file was changed", f.path, err)
		}
		plans = append(plans, p)
		paths = append(paths, f.path)
	}
	changed, seen := 0, 0
	for _, p := range plans {
		if len(p.rep.outcomes) == 0 {
			continue
		}
		seen += len(p.rep.outcomes)
		printMCPReport(stdout, p.rep)
		if p.changes() == 0 {
			continue
		}
		changed += p.changes()
		if o.dryRun {
			fmt.Fprintf(stdout, "would write %s (--dry-run: nothing written)\n", p.rep.path)
			continue
		}
		backup, err := writeSettings(p.rep.path, p.old, p.data)
		if err != nil {
			return fmt.Errorf("%s: %w", p.rep.path, err)
		}
		fmt.Fprintf(stdout, "wrote %s", p.rep.path)
		if backup != "" {
			fmt.Fprintf(stdout, " (the old file is kept as %s)", backup)
		}
		fmt.Fprintln(stdout)
	}
	switch {
	case seen == 0:
		fmt.Fprintf(stdout, "no MCP servers in %s: nothing to change\n", strings.Join(paths, " or "))
	case changed == 0:
		fmt.Fprintln(stdout, "nothing to change")
	case o.dryRun:
	case o.remove:
		fmt.Fprintln(stdout, "  restart the agent: it reads its MCP servers when it starts")
	default:
		describeMCPToken(stdout, agent, w)
		fmt.Fprintln(stdout, "  restart the agent: it reads its MCP servers when it starts")
	}
	return nil
}

// mentionGatedServers is --remove without --mcp: the hooks go, and if MCP
// servers still start behind toolgate mcp (which refuses every call once
// toolgate is gone) it says so and how to take the gateway out too.
func mentionGatedServers(stdout io.Writer, agent string, o setupOptions, getenv func(string) string) {
	files, err := mcpFiles(agent, o.project, getenv)
	if err != nil {
		return
	}
	n := 0
	for _, f := range files {
		p, err := planMCPFile(agent, f, wrapOptions(o), true)
		if err == nil {
			n += p.changes()
		}
	}
	if n > 0 {
		fmt.Fprintf(stdout, "%d MCP server(s) still start behind toolgate mcp: toolgate setup %s --mcp --remove%s takes it out\n",
			n, agent, projectFlag(o.project))
	}
}

// mcpPlan is one file as setup would write it.
type mcpPlan struct {
	old, data []byte
	rep       mcpFileReport
}

// changes is how many edits the plan makes: servers and other keys.
func (p mcpPlan) changes() int {
	n := len(p.rep.extra)
	for _, m := range p.rep.outcomes {
		if m.changed() {
			n++
		}
	}
	return n
}

// planMCPFile reads one file and edits it in memory; a missing file has
// no servers.
func planMCPFile(agent string, f mcpFile, w mcpWrap, remove bool) (mcpPlan, error) {
	p := mcpPlan{rep: mcpFileReport{path: f.path}}
	old, err := os.ReadFile(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	var rep mcpFileReport
	if agent == "codex" {
		p.data, rep, err = wrapTOMLServers(old, w, remove)
	} else {
		p.data, rep, err = wrapJSONServers(agent, old, f, w, remove)
	}
	if err != nil {
		return p, err
	}
	p.old, p.rep.outcomes, p.rep.extra = old, rep.outcomes, rep.extra
	return p, nil
}

// mcpFile is one file that holds MCP servers, and which of its sections.
type mcpFile struct {
	path string
	// project: only this project's entry of ~/.claude.json's projects;
	// all of them (and the top level) when empty.
	project string
	// onlyProjects: ~/.claude.json read for --project: its top-level
	// servers belong to the user, not the project.
	onlyProjects bool
}

// mcpFiles lists where each agent keeps its MCP servers: the user's files,
// or with --project that project's (for Claude Code also the project's
// private entry in ~/.claude.json, which `claude mcp add` writes by default).
func mcpFiles(agent, project string, getenv func(string) string) ([]mcpFile, error) {
	home := getenv("HOME")
	claudeJSON := ""
	if agent == "claude-code" {
		if dir := getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(dir) {
			claudeJSON = filepath.Join(dir, ".claude.json")
		} else if filepath.IsAbs(home) {
			claudeJSON = filepath.Join(home, ".claude.json")
		}
	}
	if project != "" {
		switch agent {
		case "claude-code":
			files := []mcpFile{{path: filepath.Join(project, ".mcp.json")}}
			if claudeJSON != "" {
				files = append(files, mcpFile{path: claudeJSON, project: project, onlyProjects: true})
			}
			return files, nil
		case "codex":
			return []mcpFile{{path: filepath.Join(project, ".codex", "config.toml")}}, nil
		}
		return []mcpFile{{path: filepath.Join(project, ".gemini", "settings.json")}}, nil
	}
	if !filepath.IsAbs(home) {
		return nil, errors.New("$HOME is not set to an absolute directory")
	}
	switch agent {
	case "claude-code":
		return []mcpFile{{path: claudeJSON}}, nil
	case "codex":
		dir := filepath.Join(home, ".codex")
		if d := getenv("CODEX_HOME"); filepath.IsAbs(d) {
			dir = d
		}
		return []mcpFile{{path: filepath.Join(dir, "config.toml")}}, nil
	}
	return []mcpFile{{path: filepath.Join(home, ".gemini", "settings.json")}}, nil
}

// printMCPReport says, for each server of a file, what setup did and the
// command line before and after (never the env's values).
func printMCPReport(w io.Writer, rep mcpFileReport) {
	fmt.Fprintf(w, "%s:\n", rep.path)
	for _, m := range rep.outcomes {
		if m.reason != "" {
			fmt.Fprintf(w, "  %s: %s: %s\n", m.where, m.action, m.reason)
		} else {
			fmt.Fprintf(w, "  %s: %s\n", m.where, m.action)
		}
		if m.changed() {
			fmt.Fprintf(w, "    - %s\n    + %s\n", quoteLine(m.before), quoteLine(m.after))
		}
	}
	for _, e := range rep.extra {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

// quoteLine is a command line as a shell would read it.
func quoteLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// describeMCPToken says where the wrapped servers' gateway finds its token.
func describeMCPToken(w io.Writer, agent string, wr mcpWrap) {
	if wr.tokenFile != "" {
		fmt.Fprintf(w, "  the gateway reads its token from %s\n", wr.tokenFile)
		return
	}
	switch agent {
	case "codex":
		fmt.Fprintf(w, "  the gateway reads $%s, which each wrapped server's env_vars passes on from Codex's environment\n", tokenEnv)
	case "gemini":
		fmt.Fprintf(w, "  the gateway reads $%s, which security.environmentVariableRedaction.allowed lets Gemini CLI pass on to MCP servers\n", tokenEnv)
	default:
		fmt.Fprintf(w, "  the gateway reads $%s from Claude Code's environment (an agent token)\n", tokenEnv)
	}
}
