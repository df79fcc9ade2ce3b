package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// setupOptions are the flags of `toolgate setup`.
type setupOptions struct {
	hookOptions
	// project wires one project's settings instead of the user's, and
	// pins the workspace of its calls to that directory.
	project  string
	dryRun   bool
	remove   bool
	codexBin string
	// mcp wraps the agent's MCP servers in toolgate mcp instead of
	// writing hooks (docs/agents.md#wrapping-an-agents-mcp-servers).
	mcp bool
}

// runSetup is `toolgate setup <agent>`: it puts toolgate's hooks into the
// agent's own settings file (merged: the other settings and hooks stay,
// older toolgate hooks go, a backup is kept) and, for Codex, trusts them,
// since Codex skips a hook no one has trusted without a word.
func runSetup(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	o, agent, err := parseSetupArgs(args, stderr, getenv)
	if err != nil {
		return failed(stderr, "toolgate setup", err)
	}
	if o.mcp {
		if err := runSetupMCP(agent, o, stdout, getenv); err != nil {
			return failed(stderr, "toolgate setup", err)
		}
		return exitOK
	}
	path, err := settingsFile(agent, o.project, getenv)
	if err != nil {
		return failed(stderr, "toolgate setup", err)
	}
	changed, err := setupFile(agent, path, o, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate setup: %s: %v; nothing was changed\n", path, err)
		return exitError
	}
	if agent == "codex" && !o.remove && !o.dryRun {
		commands := snippetCommands(agentSnippet(agent, o.hookOptions))
		if err := trustCodexHooks(o.codexBin, path, setupDir(o.project, getenv), commands, stdout); err != nil {
			fmt.Fprintf(stderr, "toolgate setup: the hooks are in %s, but Codex runs a hook only once it is trusted: %v\n"+
				"Trust them in Codex (/hooks), or run this again with --codex-bin PATH.\n", path, err)
			return exitError
		}
	}
	if changed && !o.dryRun && !o.remove {
		fmt.Fprintf(stdout, "check it: toolgate doctor %s%s\n", agent, projectFlag(o.project))
	}
	if o.remove {
		mentionGatedServers(stdout, agent, o, getenv)
	}
	return exitOK
}

// parseSetupArgs reads `<agent> [flags]`.
func parseSetupArgs(args []string, stderr io.Writer, getenv func(string) string) (setupOptions, string, error) {
	var o setupOptions
	fs := flag.NewFlagSet("toolgate setup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	u := serverURL(getenv)
	fs.StringVar(&o.url, "url", u, "the toolgate server the hooks ask (default $TOOLGATE_URL, else "+defaultURL+")")
	fs.StringVar(&o.tokenFile, "token-file", "", "the command hook reads the token from this file (default: $TOOLGATE_TOKEN in the agent's environment)")
	fs.IntVar(&o.wait, "wait", -1, fmt.Sprintf("seconds an ask waits for a person (0-600; default %d)", defaultConfigWait))
	fs.StringVar(&o.askMode, "hook-ask", "", "what an ask becomes: wait (for a person, the default) or agent (handed to the agent's own prompt: weaker)")
	fs.BoolVar(&o.command, "command", false, "claude-code: a command hook instead of the http hook")
	fs.StringVar(&o.bin, "bin", defaultBin(), "how the agent runs toolgate (default: this program's absolute path)")
	fs.StringVar(&o.project, "project", "", "wire this project's settings (DIR/.claude, .codex or .gemini) and pin its workspace to DIR, instead of the user's settings")
	fs.StringVar(&o.workspace, "workspace", "", "pin the workspace of every call to this absolute directory (default: --project's DIR, else each session's first cwd)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the settings file it would write and change nothing")
	fs.BoolVar(&o.remove, "remove", false, "take toolgate's hooks out of the settings instead")
	fs.StringVar(&o.codexBin, "codex-bin", "codex", "codex: the Codex program that trusts the hooks")
	fs.BoolVar(&o.mcp, "mcp", false, "put toolgate mcp in front of the agent's stdio MCP servers instead of writing hooks (with --remove: take it out)")
	agent, err := parseAgentArgs(fs, args)
	if err != nil {
		return o, "", err
	}
	if err := o.check(); err != nil {
		return o, "", err
	}
	return o, agent, nil
}

// check validates the flags and makes the paths absolute.
func (o *setupOptions) check() error {
	if _, err := (&conn{url: o.url, token: "-"}).resolve(); err != nil {
		return err
	}
	if o.wait > maxWait {
		return fmt.Errorf("--wait must be from 0 to %d", maxWait)
	}
	if o.askMode != "" && o.askMode != "wait" && o.askMode != "agent" {
		return fmt.Errorf("--hook-ask must be wait or agent, not %q", o.askMode)
	}
	if o.project != "" {
		dir, err := filepath.Abs(o.project)
		if err != nil {
			return err
		}
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return fmt.Errorf("--project %s is not a directory", dir)
		}
		o.project = dir
		if o.workspace == "" {
			o.workspace = dir
		}
	}
	if o.workspace != "" && !filepath.IsAbs(o.workspace) {
		return errors.New("--workspace must be an absolute directory")
	}
	if o.tokenFile != "" {
		abs, err := filepath.Abs(o.tokenFile)
		if err != nil {
			return err
		}
		o.tokenFile = abs
	}
	return nil
}

// defaultBin is this program's absolute path, so that the agent runs the
// same toolgate whatever its PATH; "toolgate" when it cannot be known.
func defaultBin() string {
	exe, err := os.Executable()
	if err != nil || strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "toolgate" // go run's temporary binary would be gone tomorrow
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		return p
	}
	return exe
}

// settingsFile is the file each agent reads its hooks from: the user's,
// or the project's with --project. Claude Code's user folder moves with
// $CLAUDE_CONFIG_DIR and Codex's with $CODEX_HOME, as the agents do.
func settingsFile(agent, project string, getenv func(string) string) (string, error) {
	if project != "" {
		switch agent {
		case "claude-code":
			return filepath.Join(project, ".claude", "settings.json"), nil
		case "codex":
			return filepath.Join(project, ".codex", "hooks.json"), nil
		}
		return filepath.Join(project, ".gemini", "settings.json"), nil
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		return "", errors.New("$HOME is not set to an absolute directory")
	}
	switch agent {
	case "claude-code":
		if dir := getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(dir) {
			return filepath.Join(dir, "settings.json"), nil
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	case "codex":
		if dir := getenv("CODEX_HOME"); filepath.IsAbs(dir) {
			return filepath.Join(dir, "hooks.json"), nil
		}
		return filepath.Join(home, ".codex", "hooks.json"), nil
	}
	return filepath.Join(home, ".gemini", "settings.json"), nil
}

// setupDir is where the agent runs: the project, else the home.
func setupDir(project string, getenv func(string) string) string {
	if project != "" {
		return project
	}
	return getenv("HOME")
}

func projectFlag(project string) string {
	if project == "" {
		return ""
	}
	return " --project " + shellQuote(project)
}

// setupFile merges the hooks into one settings file and says what it did.
// It reports whether the file changed (or would, with --dry-run).
func setupFile(agent, path string, o setupOptions, stdout io.Writer) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	settings, err := parseObject(old)
	if err != nil {
		return false, fmt.Errorf("cannot read it as JSON (%w): fix or move it first", err)
	}
	var snippet hookSettings
	if !o.remove {
		snippet = agentSnippet(agent, o.hookOptions)
	}
	ch, err := wireHooks(settings, snippet)
	if err != nil {
		return false, err
	}
	data, err := settings.indented()
	if err != nil {
		return false, err
	}
	if bytes.Equal(bytes.TrimSpace(data), bytes.TrimSpace(old)) || (o.remove && ch.removed == 0) {
		fmt.Fprintf(stdout, "%s already says this: nothing to change\n", path)
		return false, nil
	}
	if o.dryRun {
		fmt.Fprintf(stdout, "would write %s:\n%s", path, data)
		return true, nil
	}
	backup, err := writeSettings(path, old, data)
	if err != nil {
		return false, err
	}
	describeSetup(stdout, agent, path, backup, ch, o)
	return true, nil
}

// describeSetup says what setup wrote, in words.
func describeSetup(w io.Writer, agent, path, backup string, ch hookChange, o setupOptions) {
	fmt.Fprintf(w, "wrote %s", path)
	if backup != "" {
		fmt.Fprintf(w, " (the old file is kept as %s)", backup)
	}
	fmt.Fprintln(w)
	if ch.removed > 0 {
		fmt.Fprintf(w, "  took out %d older toolgate hook(s)\n", ch.removed)
	}
	if o.remove {
		return
	}
	fmt.Fprintf(w, "  toolgate's hook runs at %s and asks %s\n", strings.Join(ch.events, " and "), o.url)
	if o.workspace != "" {
		fmt.Fprintf(w, "  the workspace of every call is %s\n", o.workspace)
	}
	if agent == "gemini" {
		fmt.Fprintln(w, "  Gemini CLI runs hooks only in folders it trusts: toolgate doctor gemini, run in a project, says whether it trusts that one")
	}
	switch {
	case o.tokenFile != "":
		fmt.Fprintf(w, "  the token is read from %s\n", o.tokenFile)
	case agent == "claude-code" && !o.command:
		fmt.Fprintln(w, "  the token: Claude Code sends $TOOLGATE_TOKEN from its environment (an agent token)")
	default:
		fmt.Fprintln(w, "  the token: the hook reads $TOOLGATE_TOKEN from the agent's environment (an agent token)")
	}
}

// writeSettings replaces a settings file: the old one is copied aside
// first (its name is returned), the new one is written beside it and
// renamed over it, keeping the old file's permissions (0600 for a new one).
func writeSettings(path string, old, data []byte) (string, error) {
	dir := filepath.Dir(path)
	mode := os.FileMode(0o600)
	backup := ""
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
		var err error
		if backup, err = keepBackup(path, old, mode); err != nil {
			return "", fmt.Errorf("keeping a backup: %w", err)
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".toolgate-setup-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return backup, os.Rename(tmp.Name(), path)
}

// keepBackup writes old beside path as <path>.bak-<UTC time>, never over
// an earlier backup: two runs within a second (hooks, then MCP servers, of
// one Gemini settings file) keep both.
func keepBackup(path string, old []byte, mode os.FileMode) (string, error) {
	base := path + ".bak-" + time.Now().UTC().Format("20060102T150405Z")
	name := base
	for i := 2; ; i++ {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, os.ErrExist) && i < 100 {
			name = fmt.Sprintf("%s-%d", base, i)
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(old); err != nil {
			f.Close()
			return "", err
		}
		return name, f.Close()
	}
}
