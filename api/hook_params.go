package api

import (
	"net/http"
	"path"
	"strings"
	"time"
	"unicode"

	"github.com/toolgate/toolgate/service"
)

// HookAskMode says what a hook does with the policy's ask: wait for a
// person (the default), or hand the ask back to the agent's own prompt.
type HookAskMode string

const (
	// HookAskWait answers every hook event allow or deny: an ask waits for
	// a person in toolgate (browser, webhook) up to the hook's wait, so the
	// agent's own permission mode cannot turn it into a run
	// (docs/agents.md#every-hook-answer-is-final).
	HookAskWait HookAskMode = "wait"
	// HookAskAgent hands an ask back to the agent (Claude Code's "ask",
	// Codex's and Gemini CLI's own prompt). Weaker: an agent in a bypass or
	// yolo mode runs the call without asking anyone.
	HookAskAgent HookAskMode = "agent"
)

// ParseHookAskMode reads "wait" or "agent".
func ParseHookAskMode(s string) (HookAskMode, bool) {
	switch m := HookAskMode(s); m {
	case HookAskWait, HookAskAgent:
		return m, true
	}
	return "", false
}

// hookParams are the query parameters of a hook route, which the agent's
// hook configuration sets and the model cannot: the wait for a person, the
// ask mode, the pinned workspace and the agent's home and user.
type hookParams struct {
	wait      time.Duration
	ask       HookAskMode
	workspace string
	home      string
	user      string
}

// The headers an http hook sends the agent's home and user in (Claude
// Code fills them from its environment through allowedEnvVars), for the
// home and user query parameters that a command hook sets.
const (
	HeaderHookHome = "X-Toolgate-Home"
	HeaderHookUser = "X-Toolgate-User"
)

// paramOrHeader is a query parameter, else the header.
func paramOrHeader(r *http.Request, param, header string) string {
	if v := r.URL.Query().Get(param); v != "" {
		return v
	}
	return r.Header.Get(header)
}

// maxUserName bounds the user query parameter.
const maxUserName = 64

// readHookParams reads and checks a hook request's query parameters.
func (s *Server) readHookParams(r *http.Request) (hookParams, error) {
	q := r.URL.Query()
	p := hookParams{ask: s.deps.HookAsk}
	var err error
	if p.wait, err = s.hookWaitFor(r); err != nil {
		return p, err
	}
	if v := q.Get("ask"); v != "" {
		m, ok := ParseHookAskMode(v)
		if !ok {
			return p, service.BadRequest("ask", "ask must be wait or agent, not %q", v)
		}
		p.ask = m
	}
	if p.workspace, err = absoluteParam(q.Get("workspace"), "workspace"); err != nil {
		return p, err
	}
	if p.home, err = absoluteParam(paramOrHeader(r, "home", HeaderHookHome), "home"); err != nil {
		return p, err
	}
	if p.user, err = userParam(paramOrHeader(r, "user", HeaderHookUser)); err != nil {
		return p, err
	}
	return p, nil
}

// absoluteParam checks a directory query parameter: empty, or an absolute
// path (a Windows drive path included), returned cleaned.
func absoluteParam(v, field string) (string, error) {
	if v == "" {
		return "", nil
	}
	if strings.ContainsRune(v, 0) || !isAbsoluteDir(v) {
		return "", service.BadRequest(field, "%s must be an absolute directory path", field)
	}
	if strings.HasPrefix(v, "/") {
		return path.Clean(v), nil
	}
	return v, nil
}

// isAbsoluteDir reports whether v is /... or a drive path (C:\ or C:/).
func isAbsoluteDir(v string) bool {
	if strings.HasPrefix(v, "/") {
		return true
	}
	return len(v) >= 3 && unicode.IsLetter(rune(v[0])) && v[1] == ':' && (v[2] == '\\' || v[2] == '/')
}

// userParam checks the user query parameter: a login name of printable
// characters without spaces, at most maxUserName bytes.
func userParam(v string) (string, error) {
	if len(v) > maxUserName {
		return "", service.BadRequest("user", "user must be at most %d bytes", maxUserName)
	}
	for _, r := range v {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return "", service.BadRequest("user", "user must be a login name of printable characters without spaces")
		}
	}
	return v, nil
}
