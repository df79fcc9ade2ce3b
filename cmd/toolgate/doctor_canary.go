package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// canaryCommand is the call doctor sends through the hook: toolgate's
// built-in rules deny it whatever the user's policy says, so any other
// answer means the hook does not reach a working toolgate.
const canaryCommand = "rm -rf /"

// canaryTimeout bounds one run of the hook: a deny needs no person.
const canaryTimeout = 30 * time.Second

// canaryHookEvent is the fields of a tool event the three agents share
// (in encoding/json's order for a map, as it was written before).
type canaryHookEvent struct {
	Cwd           string      `json:"cwd"`
	HookEventName string      `json:"hook_event_name"`
	SessionID     string      `json:"session_id"`
	ToolInput     canaryInput `json:"tool_input"`
	ToolName      string      `json:"tool_name"`
}

type canaryInput struct {
	Command string `json:"command"`
}

// canaryEvent is the agent's own event for the canary call.
func canaryEvent(agent, dir string) []byte {
	event := canaryHookEvent{SessionID: "toolgate-doctor", Cwd: dir,
		HookEventName: "PreToolUse", ToolName: "Bash", ToolInput: canaryInput{Command: canaryCommand}}
	if agent == "gemini" {
		event.HookEventName = "BeforeTool"
		event.ToolName = "run_shell_command"
	}
	b, _ := json.Marshal(event)
	return b
}

// checkRoundTrip runs the wired hook as the agent would with the canary
// call and checks that the answer denies it.
func checkRoundTrip(r *doctorReport, agent string, h *foundHandler, dir string, getenv func(string) string) {
	event := canaryEvent(agent, dir)
	var answer []byte
	var err error
	if h.URL != "" {
		answer, err = runHTTPHook(h, string(h.URL), event, getenv)
	} else {
		answer, err = runCommandHook(string(h.Command), dir, event)
	}
	if err == nil {
		err = deniesCanary(answer)
	}
	if err != nil {
		r.fail("%s: the hook, run as the agent runs it, does not answer with toolgate's deny of %q: %v", agent, canaryCommand, err)
		return
	}
	r.ok("%s: the hook, run as the agent runs it, denies %q", agent, canaryCommand)
}

// runCommandHook runs a command hook through the shell with this
// environment, the event on stdin, as the agents do.
func runCommandHook(command, dir string, event []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), canaryTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(event)
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, max: 2048}
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("the hook failed (%v): %s", err, msg)
	}
	return out, nil
}

// envRef is a $VAR or ${VAR} in an http hook's header.
var envRef = regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)

// runHTTPHook posts the event as Claude Code's http hook does: headers
// with $VAR filled from the environment for the variables the hook lists
// in allowedEnvVars, and empty for any other.
func runHTTPHook(h *foundHandler, url string, event []byte, getenv func(string) string) ([]byte, error) {
	allowed := map[string]bool{}
	for _, s := range h.AllowedEnvVars {
		allowed[s] = true
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(event))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h.Headers {
		req.Header.Set(k, envRef.ReplaceAllStringFunc(string(v), func(ref string) string {
			m := envRef.FindStringSubmatch(ref)
			name := m[1] + m[2]
			if !allowed[name] {
				return ""
			}
			return getenv(name)
		}))
	}
	client := &http.Client{Timeout: canaryTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("toolgate answered %d: %s", resp.StatusCode, errorMessage(body))
	}
	return body, nil
}

// deniesCanary reads a hook answer of any of the three agents and checks
// that it denies the call.
func deniesCanary(answer []byte) error {
	var a struct {
		Decision           string `json:"decision"`
		HookSpecificOutput struct {
			PermissionDecision string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		return fmt.Errorf("the answer is not JSON: %w", err)
	}
	if a.HookSpecificOutput.PermissionDecision == "deny" || a.Decision == "deny" || a.Decision == "block" {
		return nil
	}
	return fmt.Errorf("%w: %s", errNoDecision, bytes.TrimSpace(answer))
}
