package main

import (
	"encoding/json"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// The settings snippets of --print-config. Each agent's hook settings are
// documented by the agent:
//   - Claude Code: https://code.claude.com/docs/en/hooks ("Hook handler
//     fields", "HTTP hook fields"; timeout in seconds, matcher "*" for all
//     tools). A hook that fails (a non-2xx answer, a refused connection, a
//     timeout) is a non-blocking error and the call goes on, unless the
//     hook says "onFailure": "block" (Claude Code 2.1.295 and later), which
//     every snippet here does; the http hook also asks for on_error=deny.
//   - Codex CLI: https://developers.openai.com/codex/hooks (hooks.json,
//     command hooks only; timeout in seconds; no matcher matches all).
//   - Gemini CLI: https://geminicli.com/docs/hooks/reference/ (settings.json,
//     command hooks only; timeout in milliseconds, default 60000).

// defaultConfigWait is the wait the snippets give an ask when --wait is
// not set: the server's default --hook-wait.
const defaultConfigWait = 120

// hookTimeoutSlack is how much longer than the wait an agent lets the hook
// run, so that toolgate answers before the agent gives up on it.
const hookTimeoutSlack = 15

// onFailureBlock is Claude Code's hook field that blocks the call when the
// hook itself fails, instead of going on without it.
var onFailureBlock = "block"

// printConfig prints the settings snippet of an agent for the server.
func printConfig(agent string, o hookOptions, stdout, stderr io.Writer) int {
	v := agentSnippet(agent, o)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // the & of a URL stays &, as a person would write it
	if err := enc.Encode(v); err != nil {
		return failed(stderr, "toolgate", err)
	}
	return exitOK
}

// agentSnippet is the hooks part of an agent's settings for the server:
// what --print-config prints and what setup merges into the file.
func agentSnippet(agent string, o hookOptions) hookSettings {
	wait := o.wait
	if wait < 0 {
		wait = defaultConfigWait
	}
	switch agent {
	case "claude-code":
		if o.command {
			return claudeCommandConfig(o, wait)
		}
		return claudeHTTPConfig(o, wait)
	case "codex":
		return codexConfig(o, wait)
	}
	return geminiConfig(o, wait)
}

// bothEvents is Claude Code's and Codex's hooks: h at PreToolUse and at
// PermissionRequest, for the tools matcher names.
func bothEvents(matcher string, h hookHandler) hookSettings {
	return hookSettings{Hooks: map[string][]hookGroup{
		"PreToolUse":        {{Matcher: matcher, Hooks: []hookHandler{h}}},
		"PermissionRequest": {{Matcher: matcher, Hooks: []hookHandler{h}}},
	}}
}

// claudeHTTPConfig is Claude Code's settings.json with http hooks: the
// token comes from $TOOLGATE_TOKEN through allowedEnvVars, never from the
// file, and a malformed event is answered with a deny (on_error=deny).
func claudeHTTPConfig(o hookOptions, wait int) hookSettings {
	q := url.Values{}
	// on_error=deny: a refused event is answered with a deny, since Claude
	// Code runs the call on any non-2xx answer it is not told to block on.
	q.Set("on_error", "deny")
	q.Set("wait_seconds", strconv.Itoa(wait))
	if o.askMode != "" {
		q.Set("ask", o.askMode)
	}
	if o.workspace != "" {
		q.Set("workspace", o.workspace)
	}
	u := strings.TrimRight(o.url, "/") + "/api/v1/hooks/claude-code?" + q.Encode()
	// The agent's home and user go in headers, filled from its environment.
	h := hookHandler{Type: "http", URL: u, Timeout: wait + hookTimeoutSlack, OnFailure: onFailureBlock,
		Headers: map[string]string{"Authorization": "Bearer $TOOLGATE_TOKEN",
			"X-Toolgate-Home": "$HOME", "X-Toolgate-User": "$USER"},
		AllowedEnvVars: []string{"TOOLGATE_TOKEN", "HOME", "USER"}}
	return bothEvents("*", h)
}

// hookCommand is the command line an agent runs for the command hook.
func hookCommand(o hookOptions, agent string, wait int) string {
	parts := []string{shellQuote(o.bin), "hook", agent, "--url", shellQuote(strings.TrimRight(o.url, "/"))}
	if o.tokenFile != "" {
		parts = append(parts, "--token-file", shellQuote(o.tokenFile))
	}
	if wait >= 0 {
		parts = append(parts, "--wait", strconv.Itoa(wait))
	}
	if o.askMode != "" {
		parts = append(parts, "--hook-ask", o.askMode)
	}
	if o.workspace != "" {
		parts = append(parts, "--workspace", shellQuote(o.workspace))
	}
	return strings.Join(parts, " ")
}

func commandHook(cmd string, timeout int) hookHandler {
	return hookHandler{Type: "command", Command: cmd, Timeout: timeout}
}

// claudeCommandConfig is Claude Code's settings.json with command hooks.
// Both events may wait for a person, so both have the wait's timeout.
func claudeCommandConfig(o hookOptions, wait int) hookSettings {
	h := commandHook(hookCommand(o, "claude-code", wait), wait+hookTimeoutSlack)
	h.OnFailure = onFailureBlock
	return bothEvents("*", h)
}

// codexConfig is Codex CLI's hooks.json: PreToolUse waits for a person on
// an ask, PermissionRequest on the asks Codex raises itself.
func codexConfig(o hookOptions, wait int) hookSettings {
	return bothEvents("", commandHook(hookCommand(o, "codex", wait), wait+hookTimeoutSlack))
}

// geminiConfig is the hooks part of Gemini CLI's settings.json. BeforeTool
// is its only tool event, and an ask waits there, so its timeout covers
// the wait.
func geminiConfig(o hookOptions, wait int) hookSettings {
	h := hookHandler{Name: "toolgate", Type: "command", Command: hookCommand(o, "gemini", wait),
		Timeout:     (wait + hookTimeoutSlack) * 1000,
		Description: "toolgate decides every tool call (allow, ask a person, deny)"}
	return hookSettings{Hooks: map[string][]hookGroup{"BeforeTool": {{Matcher: "*", Hooks: []hookHandler{h}}}}}
}

// shellQuote quotes a word for the shell that runs the hook command when
// it holds anything but safe characters.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
