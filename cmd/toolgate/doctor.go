package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// doctorOptions are the flags of `toolgate doctor`.
type doctorOptions struct {
	url      string
	project  string
	codexBin string
}

// doctorReport collects the checks' lines and counts the failures.
type doctorReport struct {
	w        io.Writer
	failures int
}

func (r *doctorReport) ok(format string, a ...any) {
	fmt.Fprintf(r.w, "ok    "+format+"\n", a...)
}

func (r *doctorReport) fail(format string, a ...any) {
	r.failures++
	fmt.Fprintf(r.w, "FAIL  "+format+"\n", a...)
}

// runDoctor is `toolgate doctor [agent...]`: it checks that the server
// answers and, for each agent (those named, else every agent that has a
// settings file), that toolgate's hook runs at every tool call, that the
// agent will run it (Claude Code's disableAllHooks, Codex's trust, Gemini
// CLI's hooks switch), and that the hook, run exactly as the agent runs it
// (same command or URL, same environment), answers a call that must be
// denied with a deny. Any gap exits 1.
func runDoctor(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var o doctorOptions
	fs := flag.NewFlagSet("toolgate doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	u := serverURL(getenv)
	fs.StringVar(&o.url, "url", u, "the toolgate server whose /healthz is checked (default $TOOLGATE_URL, else "+defaultURL+")")
	fs.StringVar(&o.project, "project", "", "check this project's settings instead of the user's")
	fs.StringVar(&o.codexBin, "codex-bin", "codex", "codex: the Codex program that reports the hooks' trust")
	named, err := parseInterspersed(fs, args)
	if err != nil {
		return exitError
	}
	if o.project != "" {
		abs, err := filepath.Abs(o.project)
		if err != nil {
			return failed(stderr, "toolgate doctor", err)
		}
		o.project = abs
	}
	names, err := doctorAgents(named, o.project, getenv)
	if err != nil {
		return failed(stderr, "toolgate doctor", err)
	}
	r := &doctorReport{w: stdout}
	checkHealth(r, o.url)
	if len(names) == 0 {
		r.fail("no agent has a settings file here: run toolgate setup claude-code|codex|gemini")
	}
	for _, agent := range names {
		checkAgent(r, agent, o, getenv)
	}
	if r.failures > 0 {
		fmt.Fprintf(stdout, "%d problem(s): calls may run without toolgate\n", r.failures)
		return exitError
	}
	fmt.Fprintln(stdout, "every check passed")
	return exitOK
}

// doctorAgents is the agents to check: those named, else every agent
// whose settings file exists.
func doctorAgents(named []string, project string, getenv func(string) string) ([]string, error) {
	for _, a := range named {
		if !agents[a] {
			return nil, fmt.Errorf("the agent must be claude-code, codex or gemini, not %q", a)
		}
	}
	if len(named) > 0 {
		return named, nil
	}
	var found []string
	for _, a := range []string{"claude-code", "codex", "gemini"} {
		path, err := settingsFile(a, project, getenv)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(path); err == nil {
			found = append(found, a)
		}
	}
	return found, nil
}

// checkHealth checks that the server answers /healthz.
func checkHealth(r *doctorReport, base string) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(strings.TrimRight(base, "/") + "/healthz")
	if err != nil {
		r.fail("toolgate at %s: %v", base, err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		r.fail("toolgate at %s: /healthz answered %d", base, resp.StatusCode)
		return
	}
	r.ok("toolgate answers at %s", base)
}

// checkAgent runs every check of one agent.
func checkAgent(r *doctorReport, agent string, o doctorOptions, getenv func(string) string) {
	path, err := settingsFile(agent, o.project, getenv)
	if err != nil {
		r.fail("%s: %v", agent, err)
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		r.fail("%s: %v: run toolgate setup %s%s", agent, err, agent, projectFlag(o.project))
		return
	}
	settings, err := parseObject(data)
	if err != nil {
		r.fail("%s: %s is not JSON the agent can read: %v", agent, path, err)
		return
	}
	wiring, ok := findWiring(r, agent, path, settings)
	if !ok {
		return
	}
	checkSwitches(r, agent, path, settings)
	dir := doctorDir(o.project)
	switch agent {
	case "codex":
		checkCodexTrust(r, o.codexBin, path, dir)
	case "gemini":
		checkGeminiTrust(r, settings, dir, getenv)
	}
	checkRoundTrip(r, agent, wiring, dir, getenv)
}

// doctorDir is where the agent is checked as running: the project, else
// the current directory.
func doctorDir(project string) string {
	if project != "" {
		return project
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return "/"
}

// agentEvents are the events toolgate's hook must run at; the first is the
// one that sees every tool call before it runs.
var agentEvents = map[string][]string{
	"claude-code": {"PreToolUse", "PermissionRequest"},
	"codex":       {"PreToolUse", "PermissionRequest"},
	"gemini":      {"BeforeTool"},
}

// findWiring checks that each event runs a toolgate handler for every
// tool and returns the handler of the first event.
func findWiring(r *doctorReport, agent, path string, settings *jsonObject) (*foundHandler, bool) {
	events, err := settings.object("hooks")
	if err != nil {
		r.fail("%s: %s: %v", agent, path, err)
		return nil, false
	}
	var first *foundHandler
	for i, event := range agentEvents[agent] {
		h, matcher := toolgateHandler(events, event)
		switch {
		case h == nil:
			r.fail("%s: %s runs no toolgate hook at %s: run toolgate setup %s", agent, path, event, agent)
			return nil, false
		case matcher != "" && matcher != "*":
			r.fail("%s: toolgate's %s hook only runs for tools matching %q: every tool must pass through it", agent, event, matcher)
		case agent == "claude-code" && string(h.OnFailure) != onFailureBlock:
			r.fail("%s: toolgate's %s hook lacks \"onFailure\": \"block\": with toolgate down the call would run", agent, event)
		default:
			r.ok("%s: %s runs toolgate's hook for every tool (%s)", agent, event, path)
		}
		if i == 0 {
			first = h
		}
	}
	return first, true
}

// toolgateHandler finds toolgate's handler of an event and its matcher.
func toolgateHandler(events *jsonObject, event string) (*foundHandler, string) {
	groups, err := eventGroups(events, event)
	if err != nil {
		return nil, ""
	}
	for _, g := range groups {
		var group struct {
			Matcher string         `json:"matcher"`
			Hooks   []foundHandler `json:"hooks"`
		}
		if json.Unmarshal(g, &group) != nil {
			continue
		}
		for i := range group.Hooks {
			if isToolgateHook(group.Hooks[i]) {
				return &group.Hooks[i], group.Matcher
			}
		}
	}
	return nil, ""
}

// checkSwitches checks the agent's switches that turn hooks off.
func checkSwitches(r *doctorReport, agent, path string, settings *jsonObject) {
	switch agent {
	case "claude-code":
		if raw, ok := settings.get("disableAllHooks"); ok && string(raw) == "true" {
			r.fail("%s: %s says disableAllHooks: true, so no hook runs", agent, path)
		}
	case "gemini":
		cfg, err := settings.object("hooksConfig")
		if err != nil {
			r.fail("%s: %s: %v", agent, path, err)
			return
		}
		if raw, ok := cfg.get("enabled"); ok && string(raw) == "false" {
			r.fail("%s: %s says hooksConfig.enabled: false, so no hook runs", agent, path)
		}
		var disabled []string
		if raw, ok := cfg.get("disabled"); ok && json.Unmarshal(raw, &disabled) == nil {
			for _, d := range disabled {
				if d == "toolgate" || toolgateCommand.MatchString(d) {
					r.fail("%s: %s lists toolgate's hook in hooksConfig.disabled", agent, path)
				}
			}
		}
	}
}

// checkCodexTrust checks that Codex will run toolgate's hooks.
func checkCodexTrust(r *doctorReport, codexBin, path, dir string) {
	hooks, err := codexHooksStatus(codexBin, path, dir)
	if err != nil {
		r.fail("codex: cannot ask Codex whether it trusts the hooks: %v", err)
		return
	}
	if len(hooks) == 0 {
		r.fail("codex: Codex does not load toolgate's hooks of %s from %s", path, dir)
		return
	}
	for _, h := range hooks {
		if h.TrustStatus != "trusted" || !h.Enabled {
			r.fail("codex: Codex skips the hook %s (%s): run toolgate setup codex, or trust it with /hooks", h.Key, h.TrustStatus)
			return
		}
	}
	r.ok("codex: Codex trusts toolgate's %d hook(s)", len(hooks))
}

// parseInterspersed parses flags that may come before, between or after
// the arguments, and returns the arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return rest, nil
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// errNoDecision is a hook answer that does not deny the canary call.
var errNoDecision = errors.New("the answer does not deny it")
