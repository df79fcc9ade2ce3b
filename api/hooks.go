package api

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	json "github.com/go-json-experiment/json"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/service"
)

// The agent hooks (openapi.yaml, "Agent hooks"): Claude Code, Codex CLI and
// Gemini CLI post one event per tool call; each route maps the agent's tool
// name and arguments onto ours, decides, and answers in the agent's own
// output fields. This file holds what the three share: the input fields,
// the lenient decoding, the mapping and the wait for a person. Each agent's
// schema and answers live in hooks_<agent>.go, with its documentation cited.

// HookChannel is the channel_id of every hook call. The three agents are
// terminal agents, so their calls are decided as the terminal's (the spec's
// cli channel, one of the channels checked by default).
const HookChannel = "cli"

// DefaultHookWait is how long a hook waits for a person's answer when
// neither the request nor --hook-wait says otherwise.
const DefaultHookWait = 120 * time.Second

// HookInput is the part of a hook event that all three agents send
// (Claude Code and Codex: PreToolUse and PermissionRequest; Gemini CLI:
// BeforeTool). Every other member the agents send (transcript_path,
// permission_mode, tool_use_id, model, turn_id, timestamp, mcp_context,
// permission_suggestions, ...) is accepted and ignored.
type HookInput struct {
	HookEventName string         `json:"hook_event_name"`
	SessionID     string         `json:"session_id"`
	Cwd           string         `json:"cwd"`
	ToolName      string         `json:"tool_name"`
	ToolInput     map[string]any `json:"tool_input"`
}

// hookDecodeOptions are decodeOptions without the refusal of unknown
// members: agents add fields to their events from one release to the next,
// and a hook that broke on each would block every call. Duplicate members
// and invalid UTF-8 are still refused (encoding/json/v2's defaults), so the
// tool name and arguments decided are the only ones the body holds.
var hookDecodeOptions = json.JoinOptions(json.RejectUnknownMembers(false))

// decodeHook decodes a hook event (a request body read whole) into in.
func decodeHook(data []byte, in *HookInput) error {
	if err := decodeOne(bytes.NewBuffer(data), in, hookDecodeOptions, "a hook event (JSON object)"); err != nil {
		return err
	}
	if strings.TrimSpace(in.ToolName) == "" {
		return service.BadRequest("tool_name", "tool_name is required")
	}
	return nil
}

// sniffEvent reads the hook_event_name of a body decodeHook refused, by
// encoding/json's forgiving rules, only to choose the shape of the deny
// that answers it (onErrorDeny); nothing is decided from it.
func sniffEvent(data []byte) string {
	var e struct {
		HookEventName string `json:"hook_event_name"`
	}
	_ = stdjson.Unmarshal(data, &e)
	return e.HookEventName
}

// hookAgent is what differs between the agents: the name the decision log
// gives them, their tool names, and what else their arguments need.
type hookAgent struct {
	name  string
	tools map[string]string
	// moreArgs, if set, adds to the mapped arguments of a call to tool.
	moreArgs func(in *HookInput, tool string, args map[string]any)
	// refuse is the agent's deny of a call for an event, with a reason.
	refuse func(event, reason string) any
	// bookkeepingTools are the agent's tools that act on nothing outside
	// its session (hooks_bookkeeping.go).
	bookkeepingTools map[string]bool
}

// engineRequest maps a hook event onto an engine request: our tool name,
// the arguments with every path under a path key, the pinned workspace,
// the agent's home and the cli channel. The event's cwd is the command's
// working directory (moreArgs), judged as a path, never the workspace.
func (a hookAgent) engineRequest(in *HookInput, workspace, home string) *engine.Request {
	tool, ok := a.tools[in.ToolName]
	if !ok {
		tool = in.ToolName // mcp__server__tool and anything new: kept
	}
	args := hookArgs(in.ToolInput)
	if a.moreArgs != nil {
		a.moreArgs(in, tool, args)
	}
	return &engine.Request{Call: engine.NewCall(tool, args), ChannelID: HookChannel, Workspace: workspace, Home: home}
}

// hookPathAliases are the agents' names for path arguments that are not
// among the engine's path keys, and the path key each is copied to:
// Claude Code's NotebookEdit notebook_path, Gemini CLI's absolute_path
// (read_file in older releases) and dir_path (list_directory, glob,
// search_file_content, run_shell_command in newer ones).
var hookPathAliases = map[string]string{
	"notebook_path": "file_path",
	"absolute_path": "file_path",
	"dir_path":      "directory",
	"include":       "file_path", // Gemini CLI read_many_files, grep_search: file globs
}

// hookArgs copies the agent's tool_input into tool_args. The members are
// kept as they are (Claude's Bash {command}, Read {file_path}, Grep
// {pattern, path} are our names already); a path under an alias is also
// put under the engine's path key, so that path rules and the external
// directory check see it. When the agent sent that key too, both values
// are kept there as a list: a tool reads one of them, and toolgate cannot
// know which, so both are decided.
func hookArgs(input map[string]any) map[string]any {
	args := make(map[string]any, len(input)+1)
	for k, v := range input {
		args[k] = v
	}
	for alias, key := range hookPathAliases {
		if v, ok := input[alias]; ok {
			addPathValue(args, key, v)
		}
	}
	return args
}

// addPathValue adds v (a value or a list) to the path key of args,
// making a list when the key already holds something.
func addPathValue(args map[string]any, key string, v any) {
	old, taken := args[key]
	if !taken {
		args[key] = v
		return
	}
	args[key] = append(asList(old), asList(v)...)
}

// asList is v as a list of values.
func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// shellWorkdir sets the workdir of a bash call to the hook's cwd: Claude
// Code and Codex run a command in the session's working directory, which
// the event's cwd is, and the engine resolves the command's relative paths
// against workdir. A workdir member in the tool input (not an argument of
// either agent's shell tool) is replaced, so that it cannot move where the
// engine looks away from where the command runs.
func shellWorkdir(in *HookInput, tool string, args map[string]any) {
	if tool != "bash" {
		return
	}
	if in.Cwd == "" {
		delete(args, "workdir")
		return
	}
	args["workdir"] = in.Cwd
}

// hookWaitFor is the wait of a hook request: its wait_seconds query
// parameter (0 to MaxWaitSeconds), else the server's --hook-wait.
func (s *Server) hookWaitFor(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("wait_seconds")
	if v == "" {
		return s.deps.HookWait, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > MaxWaitSeconds {
		return 0, service.BadRequest("wait_seconds", "wait_seconds must be a whole number from 0 to %d", MaxWaitSeconds)
	}
	return time.Duration(n) * time.Second, nil
}

// mountHooks adds the three hook routes; each needs the evaluate right
// (the agent role, or admin).
func (s *Server) mountHooks(r chi.Router) {
	r.With(require(service.RightEvaluate)).Post("/hooks/claude-code", s.handleClaudeCodeHook)
	r.With(require(service.RightEvaluate)).Post("/hooks/codex", s.handleCodexHook)
	r.With(require(service.RightEvaluate)).Post("/hooks/gemini", s.handleGeminiHook)
}

// hookCall is one decoded and decided hook event.
type hookCall struct {
	agent hookAgent
	in    HookInput
	req   *engine.Request
	d     engine.Decision
	// e is the engine that decided d (its rules' words go in the reason).
	e *engine.Engine
	// params are the request's query parameters (readHookParams).
	params hookParams
}

// waits reports whether an ask of this call waits for a person, rather
// than going back to the agent.
func (c hookCall) waits() bool { return c.params.ask != HookAskAgent }

// decideHook decodes a hook event, checks its event name against the ones
// the route takes, decides the call and logs the decision with the agent
// and session. It writes the error response itself (hookError) and
// returns false when the request is refused.
func (s *Server) decideHook(w http.ResponseWriter, r *http.Request, agent hookAgent, events ...string) (hookCall, bool) {
	start := time.Now()
	c := hookCall{agent: agent}
	var err error
	if c.params, err = s.readHookParams(r); err != nil {
		writeError(w, r, err)
		return c, false
	}
	if _, err := onErrorDeny(r); err != nil {
		writeError(w, r, err)
		return c, false
	}
	buf, err := readBody(w, r)
	if err != nil {
		s.hookError(w, r, c, service.Classify(err))
		return c, false
	}
	defer releaseBody(buf)
	if err := decodeHook(buf.Bytes(), &c.in); err != nil {
		c.in.HookEventName = sniffEvent(buf.Bytes())
		s.hookError(w, r, c, err)
		return c, false
	}
	if !slices.Contains(events, c.in.HookEventName) {
		s.hookError(w, r, c, service.BadRequest("hook_event_name", "hook_event_name must be %s, not %q",
			strings.Join(events, " or "), c.in.HookEventName))
		return c, false
	}
	c.req = agent.engineRequest(&c.in, s.hookWorkspace(r, c), c.params.home)
	// A session grant holds in its session, for the token that asked, only.
	c.req.SessionID, c.req.TokenID = c.in.SessionID, principalToken(r)
	err = checkShellArgs(c.req.Call)
	if err == nil {
		err = s.bindChannel(r, c.req.ChannelID)
	}
	if err != nil {
		s.hookError(w, r, c, service.Classify(err))
		return c, false
	}
	c.e = s.deps.Policy.Engine()
	c.d = agent.bookkeeping(c.in.ToolName, c.e.Evaluate(c.req))
	s.observe(c.source(), start, c.req, c.d, Caller{Agent: agent.name, Session: c.in.SessionID})
	return c, true
}

// hookWorkspace is the workspace of a hook call, fixed by configuration the
// model cannot touch: the hook's workspace parameter (its --workspace in
// the agent's hook configuration), else the server's --workspace, else the
// cwd the call's session showed first.
func (s *Server) hookWorkspace(r *http.Request, c hookCall) string {
	if c.params.workspace != "" {
		return c.params.workspace
	}
	if s.deps.HookWorkspace != "" {
		return s.deps.HookWorkspace
	}
	if c.in.SessionID == "" {
		return c.in.Cwd
	}
	p, _ := PrincipalFrom(r.Context())
	return s.sessions.workspace(p.TokenID+"\x00"+c.agent.name+"\x00"+c.in.SessionID, c.in.Cwd)
}

// source is the decision log's source of a hook event: check when its ask
// waits for a person, like /api/v1/check; evaluate when the ask goes back
// to the agent, like /api/v1/evaluate.
func (c hookCall) source() string {
	if c.waits() || c.in.HookEventName == eventPermissionRequest {
		return service.SourceCheck
	}
	return service.SourceEvaluate
}

// onErrorDeny reads the on_error query parameter: "deny", or absent.
func onErrorDeny(r *http.Request) (bool, error) {
	switch v := r.URL.Query().Get("on_error"); v {
	case "":
		return false, nil
	case "deny":
		return true, nil
	default:
		return false, service.BadRequest("on_error", "on_error must be deny or absent, not %q", v)
	}
}

// hookError answers a hook request that failed: the API's error, or with
// on_error=deny a 200 carrying the agent's deny of the call, the error
// its reason. Claude Code's http hooks read any non-2xx answer as "no
// decision" and run the call; a body the agent itself built (a command
// with an unpaired surrogate escape, which toolgate refuses) must not be
// a way around toolgate, so the snippets of --print-config ask for this.
func (s *Server) hookError(w http.ResponseWriter, r *http.Request, c hookCall, err error) {
	if deny, _ := onErrorDeny(r); !deny || c.agent.refuse == nil {
		writeError(w, r, err)
		return
	}
	e := service.Classify(err)
	if httpStatus(e.Kind) >= 500 {
		slog.ErrorContext(r.Context(), "hook failed; answered deny", "path", r.URL.Path, "err", err)
	}
	writeJSON(w, http.StatusOK, c.agent.refuse(c.in.HookEventName, "toolgate refused this call: "+e.Message))
}

// personAnswer is how a wait for a person ended: allowed or not, and the
// message the agent shows.
type personAnswer struct {
	allow   bool
	message string
}

// hookAsk waits for a person's answer to a hook's ask. Every way it can end
// without a person's allow is a deny whose message says why: a denial, an
// expiry, no answer within the wait, or no approvals to ask through. ok is
// false when the agent went away.
func (s *Server) hookAsk(w http.ResponseWriter, r *http.Request, c hookCall) (personAnswer, bool) {
	if !s.approvals.Available() {
		return personAnswer{message: "toolgate: this call needs a person's approval, and this server takes no approvals"}, true
	}
	asked, err := s.approvals.Ask(r.Context(), principalToken(r), c.req, c.d, c.in.SessionID, c.agent.name, c.params.wait)
	switch {
	case err != nil:
		s.hookError(w, r, c, err)
		return personAnswer{}, false
	case asked.Gone:
		return personAnswer{}, false
	case asked.Refused:
		return personAnswer{message: "toolgate: " + asked.Reason + ", so this call is denied"}, true
	}
	return approvalAnswer(asked.Approval, c.params.wait), true
}

// approvalAnswer words the state of an approval for the agent.
func approvalAnswer(a approval.Approval, wait time.Duration) personAnswer {
	switch {
	case a.Pending():
		return personAnswer{message: fmt.Sprintf("toolgate: no one answered approval %s within %s, so the call is denied; the approval stays open a while, and the same call tried again waits on it", a.ID, wait)}
	case a.Decision == approval.DecisionAllow:
		return personAnswer{allow: true, message: fmt.Sprintf("toolgate: %s allowed this call (approval %s)", a.DecidedBy, a.ID)}
	case a.Status == approval.StatusExpired:
		return personAnswer{message: fmt.Sprintf("toolgate: approval %s expired unanswered, so the call is denied", a.ID)}
	case a.Status == approval.StatusCancelled:
		return personAnswer{message: fmt.Sprintf("toolgate: approval %s was cancelled (the server is shutting down), so the call is denied", a.ID)}
	}
	msg := fmt.Sprintf("toolgate: %s denied this call (approval %s)", a.DecidedBy, a.ID)
	if a.Comment != "" {
		msg += ": " + a.Comment
	}
	return personAnswer{message: msg}
}

// hookReason is the reason a hook answer gives for an engine decision,
// naming the rule when the reason does not, and saying in words what the
// built-in rules it names guard against: the agent reads this, and a rule
// id alone tells it nothing.
func hookReason(e *engine.Engine, d engine.Decision) string {
	msg := "toolgate: " + d.Reason
	if d.MatchedRule != "" && !strings.Contains(d.Reason, d.MatchedRule) {
		msg = fmt.Sprintf("toolgate: %s (rule %s)", d.Reason, d.MatchedRule)
	}
	if words := e.BuiltinWords(d.MatchedRule); words != "" {
		msg += ": " + words
	}
	return msg
}
