package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// hooksConfig is the policy of the hook tests. The documentation payloads
// name paths under /path/to, /home/user and /Users; external_directory
// allows those, and asks about anything else outside the workspace.
const hooksConfig = `permissions:
  enabled: true
  schema: tiered_policy
  permission_mode: normal
  defaults: {"*": ask}
  tools:
    read_file: allow
    glob: allow
    grep: allow
    list_dir: allow
    bash: ask
    write_file: deny
    edit_file: ask
    mcp_fetch_webpage: allow
    mcp_free_search: deny
  rules:
    - {id: npm_test_ok, tools: [bash], pattern: "npm test", action: allow}
    - {id: cat_ok, tools: [bash], pattern: "cat *", action: allow}
    - {id: no_rm_rf, tools: [bash], pattern: 're:rm -rf', action: deny}
    - {id: no_etc_edit, tools: [edit_file, write_file], pattern: 're:^/etc/', action: deny}
  external_directory:
    "*": ask
    /path/to: allow
    /home/user: allow
    /Users: allow
`

// hookPayload reads a documentation payload of the api package's testdata.
func hookPayload(t *testing.T, name string, set map[string]any) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "api", "testdata", "hooks", name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		m[k] = v
	}
	return m
}

// hookAnswer is every field the three agents' answers use.
type hookAnswer struct {
	HookSpecificOutput *struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		Decision                 *struct {
			Behavior string `json:"behavior"`
			Message  string `json:"message"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// summary is an answer in one word or two: the PreToolUse decision, the
// PermissionRequest behavior, or Gemini's decision; "none" for {}.
func (a hookAnswer) summary() string {
	switch {
	case a.HookSpecificOutput != nil && a.HookSpecificOutput.Decision != nil:
		return a.HookSpecificOutput.Decision.Behavior
	case a.HookSpecificOutput != nil:
		return a.HookSpecificOutput.PermissionDecision
	case a.Decision != "":
		return a.Decision
	}
	return "none"
}

// reason is the answer's reason or message.
func (a hookAnswer) reason() string {
	if h := a.HookSpecificOutput; h != nil {
		if h.Decision != nil {
			return h.Decision.Message
		}
		return h.PermissionDecisionReason
	}
	return a.Reason
}

// TestHooksDocumentedPayloads posts each agent's documentation payloads
// to the real server with an agent token and checks the answers, each
// validated against openapi.yaml.
func TestHooksDocumentedPayloads(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: hooksConfig, BuiltinYAML: "rules: []\n", Args: []string{"--hook-wait", "2s"}})
	agent := createToken(t, s, "laptop", "agent")
	cases := []struct {
		note   string
		route  string
		file   string
		set    map[string]any
		want   string
		reason string
	}{
		{note: "claude Bash npm test", route: "claude-code", file: "claude-code/pretooluse-bash.json", want: "allow", reason: "npm_test_ok"},
		{note: "claude Read", route: "claude-code", file: "claude-code/pretooluse-read.json", want: "allow"},
		{note: "claude Read outside the workspace (external directory)", route: "claude-code", file: "claude-code/pretooluse-read.json",
			set: map[string]any{"cwd": s.Workspace, "tool_input": map[string]any{"file_path": "/opt/secret/key"}}, want: "deny", reason: "no one answered"},
		{note: "claude Read outside the workspace, ask=agent: handed back", route: "claude-code?ask=agent", file: "claude-code/pretooluse-read.json",
			set: map[string]any{"cwd": s.Workspace, "tool_input": map[string]any{"file_path": "/opt/secret/key"}}, want: "ask"},
		{note: "claude Write", route: "claude-code", file: "claude-code/pretooluse-write.json", want: "deny"},
		{note: "claude Edit: an ask no one answers (--hook-wait 2s)", route: "claude-code", file: "claude-code/pretooluse-edit.json", want: "deny", reason: "no one answered"},
		{note: "claude Glob", route: "claude-code", file: "claude-code/pretooluse-glob.json", want: "allow"},
		{note: "claude Grep", route: "claude-code", file: "claude-code/pretooluse-grep.json", want: "allow"},
		{note: "claude WebFetch", route: "claude-code", file: "claude-code/pretooluse-webfetch.json", want: "allow"},
		{note: "claude WebSearch", route: "claude-code", file: "claude-code/pretooluse-websearch.json", want: "deny"},
		{note: "claude PermissionRequest rm -rf node_modules", route: "claude-code", file: "claude-code/permissionrequest-bash.json", want: "deny", reason: "no_rm_rf"},
		{note: "claude PermissionRequest npm test: allowed by the policy, still a person's (unanswered)", route: "claude-code", file: "claude-code/permissionrequest-bash.json",
			set: map[string]any{"tool_input": map[string]any{"command": "npm test"}}, want: "deny", reason: "no one answered"},
		{note: "claude PermissionRequest unanswered ask (--hook-wait 2s)", route: "claude-code", file: "claude-code/permissionrequest-bash.json",
			set: map[string]any{"tool_input": map[string]any{"command": "make"}}, want: "deny", reason: "no one answered"},
		{note: "codex PreToolUse ask, ask=agent: no decision", route: "codex?ask=agent", file: "codex/pretooluse-bash.json", want: "none"},
		{note: "codex PreToolUse ask: unanswered, a deny", route: "codex", file: "codex/pretooluse-bash.json", want: "deny", reason: "no one answered"},
		{note: "codex PreToolUse rm -rf", route: "codex", file: "codex/pretooluse-bash.json",
			set: map[string]any{"tool_input": map[string]any{"command": "rm -rf ~"}}, want: "deny", reason: "no_rm_rf"},
		{note: "codex apply_patch adding /etc/cron.d/job", route: "codex", file: "codex/pretooluse-apply-patch.json", want: "deny", reason: "no_etc_edit"},
		{note: "codex PermissionRequest unanswered ask", route: "codex", file: "codex/permissionrequest-bash.json", want: "deny", reason: "no one answered"},
		{note: "gemini read_file", route: "gemini", file: "gemini/beforetool-read-file.json", want: "none"},
		{note: "gemini write_file", route: "gemini", file: "gemini/beforetool-write-file.json", want: "deny"},
		{note: "gemini list_directory", route: "gemini", file: "gemini/beforetool-list-directory.json", want: "none"},
		{note: "gemini search_file_content", route: "gemini", file: "gemini/beforetool-search-file-content.json", want: "none"},
		{note: "gemini glob", route: "gemini", file: "gemini/beforetool-glob.json", want: "none"},
		{note: "gemini cat in the workspace: allowed by rule", route: "gemini", file: "gemini/beforetool-run-shell-command.json",
			set: map[string]any{"cwd": s.Workspace, "tool_input": map[string]any{"command": "cat ./notes.txt"}}, want: "none"},
		{note: "gemini cat run in /etc (directory): the path is external, an unanswered ask", route: "gemini", file: "gemini/beforetool-run-shell-command.json",
			set: map[string]any{"cwd": s.Workspace, "tool_input": map[string]any{"command": "cat ./shadow", "directory": "/etc"}}, want: "deny", reason: "no one answered"},
		{note: "gemini run_shell_command unanswered ask", route: "gemini", file: "gemini/beforetool-run-shell-command.json", want: "deny", reason: "no one answered"},
		{note: "gemini read_file outside the workspace (external directory ask, unanswered)", route: "gemini", file: "gemini/beforetool-read-file.json",
			set: map[string]any{"cwd": s.Workspace, "tool_input": map[string]any{"path": "/opt/secret/key"}}, want: "deny", reason: "no one answered"},
	}
	for _, c := range cases {
		st, _, body := s.Call(agent, "POST", "/api/v1/hooks/"+c.route, hookPayload(t, c.file, c.set), nil)
		if st != 200 {
			t.Errorf("%s: status %d (%s)", c.note, st, body)
			continue
		}
		a := DecodeJSON[hookAnswer](t, body)
		if a.summary() != c.want || !strings.Contains(a.reason(), c.reason) {
			t.Errorf("%s: answer %s, want %s with a reason containing %q", c.note, body, c.want, c.reason)
		}
	}
}

// TestHooksRefusals checks that hook routes need an agent (or admin)
// token and refuse a malformed event with the field, over the real server.
func TestHooksRefusals(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: hooksConfig})
	approver := createToken(t, s, "phone", "approver")
	body := hookPayload(t, "claude-code/pretooluse-bash.json", nil)
	if st, _, b := s.Call(approver, "POST", "/api/v1/hooks/claude-code", body, nil); st != 403 {
		t.Errorf("approver token: %d %s, want 403", st, b)
	}
	if st, _, b := s.Call("", "POST", "/api/v1/hooks/gemini", body, nil); st != 401 {
		t.Errorf("no token: %d %s, want 401", st, b)
	}
	bad := hookPayload(t, "claude-code/pretooluse-bash.json", map[string]any{"tool_input": []any{"ls"}})
	st, _, b := s.Call(s.Token, "POST", "/api/v1/hooks/claude-code", bad, nil)
	if st != 400 || !strings.Contains(string(b), `"field":"tool_input"`) {
		t.Errorf("tool_input an array: %d %s, want 400 naming tool_input", st, b)
	}
	dup := `{"hook_event_name":"BeforeTool","tool_name":"read_file","tool_name":"run_shell_command","tool_input":{}}`
	if st, _, b := s.Call(s.Token, "POST", "/api/v1/hooks/gemini", dup, nil); st != 400 {
		t.Errorf("duplicate tool_name: %d %s, want 400", st, b)
	}
	// What the printed http-hook snippet asks for: a refused event is a deny.
	surrogate := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"curl x | sh #\ud800"}}`
	st, _, b = s.Call(s.Token, "POST", "/api/v1/hooks/claude-code?on_error=deny", surrogate, nil)
	if a := DecodeJSON[hookAnswer](t, b); st != 200 || a.summary() != "deny" || !strings.Contains(a.reason(), "toolgate refused this call") {
		t.Errorf("on_error=deny with an unpaired surrogate: %d %s, want a 200 deny", st, b)
	}
}

// TestHooksPermissionRequestAnsweredByPerson holds a Claude Code
// PermissionRequest open while a person answers its approval over REST,
// and checks the decision log says which agent and session it came from.
func TestHooksPermissionRequestAnsweredByPerson(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: hooksConfig, BuiltinYAML: "rules: []\n"})
	agent := createToken(t, s, "laptop", "agent")
	for _, c := range []struct {
		note, choice, want string
	}{
		{note: "allowed", choice: "allow_once", want: "allow"},
		{note: "denied", choice: "deny", want: "deny"},
	} {
		event := hookPayload(t, "claude-code/permissionrequest-bash.json", map[string]any{
			"session_id": "sess-" + c.note, "tool_input": map[string]any{"command": "make " + c.note}})
		res := make(chan checkResult, 1)
		go func() {
			st, b, err := relDo(s, agent, "POST", "/api/v1/hooks/claude-code?wait_seconds=20", event)
			res <- checkResult{status: st, body: b, err: err, at: time.Now()}
		}()
		var id string
		WaitFor(t, 5*time.Second, "the approval", func() bool {
			for _, a := range listApprovals(t, s, s.Token, "pending") {
				if a.Request.ToolName == "bash" && a.Request.ChannelID == "cli" {
					id = a.ID
					return true
				}
			}
			return false
		})
		if st, b := decide(t, s, s.Token, id, c.choice); st != 200 {
			t.Fatalf("%s: decide %d %s", c.note, st, b)
		}
		select {
		case r := <-res:
			if r.err != nil || r.status != 200 {
				t.Fatalf("%s: hook %d %s %v", c.note, r.status, r.body, r.err)
			}
			ValidateResponse(t, "POST", "/api/v1/hooks/claude-code", r.status, nil, r.body)
			a := DecodeJSON[hookAnswer](t, r.body)
			if a.summary() != c.want {
				t.Errorf("%s: answer %s, want behavior %s", c.note, r.body, c.want)
			}
			if c.want == "deny" && !strings.Contains(a.reason(), "from the test") {
				t.Errorf("%s: message %q lacks the person's comment", c.note, a.reason())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the hook did not answer after the approval was decided", c.note)
		}
	}
	WaitFor(t, 5*time.Second, "the decision log", func() bool {
		st, b := s.Do("GET", "/api/v1/decisions?session=sess-allowed", nil)
		return st == 200 && strings.Contains(string(b), `"agent":"claude-code"`)
	})
}

// TestBrowserHookPermissionRequest runs Claude Code's command hook
// (`toolgate hook claude-code`) on a PermissionRequest the policy asks
// about, and a person clicks Allow once on /approvals in headless Chromium:
// the hook prints behavior allow. The prompt shows the mapped call (bash,
// the command, channel cli, the hook's session).
func TestBrowserHookPermissionRequest(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: hooksConfig, BuiltinYAML: "rules: []\n"})
	agent := createToken(t, s, "laptop", "agent")
	ctx := newBrowser(t)
	run(t, ctx, "log in",
		chromedp.Navigate(s.URL+"/"),
		chromedp.WaitVisible(tid("login-form")),
		chromedp.SendKeys(tid("token"), s.Token),
		chromedp.Click(tid("login-submit")),
		chromedp.WaitVisible(tid("severity-table")))
	run(t, ctx, "open /approvals", chromedp.Navigate(s.URL+"/approvals"), chromedp.WaitVisible(tid("no-approvals")))
	waitJS(t, ctx, "the inbox to be live", `document.querySelector('[data-testid="live-status"]').dataset.state === "on"`)

	event := payloadText(t, "claude-code/permissionrequest-bash.json", map[string]any{
		"session_id": "claude-session-7", "tool_input": map[string]any{"command": "make deploy"}})
	type result struct {
		cliResult
		err error
	}
	done := make(chan result, 1)
	bin, dir := toolgateCLI(t), t.TempDir()
	go func() {
		r, err := startCLI(bin, dir, s.URL, agent, event, "hook", "claude-code", "--wait", "30")
		done <- result{r, err}
	}()

	run(t, ctx, "see the prompt", chromedp.WaitVisible(tid("approval")))
	item := `[data-testid="approval"] `
	for _, c := range []struct{ field, want string }{
		{field: "tool", want: "bash"},
		{field: "summary", want: "make deploy"},
		{field: "channel", want: "cli"},
		{field: "session", want: "claude-session-7"},
	} {
		if got := strings.TrimSpace(textOf(t, ctx, chromedp.CSS(item+`[data-field="`+c.field+`"]`))); !strings.Contains(got, c.want) {
			t.Errorf("prompt %s = %q, want it to show %q", c.field, got, c.want)
		}
	}
	screenshot(t, ctx, "hooks-01-claude-permission-request")
	run(t, ctx, "allow once", chromedp.Click(tid("allow-once")))
	select {
	case r := <-done:
		if r.err != nil || r.code != 0 {
			t.Fatalf("toolgate hook: %v, exit %d, stderr %s", r.err, r.code, r.stderr)
		}
		if a := DecodeJSON[hookAnswer](t, []byte(r.stdout)); a.summary() != "allow" {
			t.Errorf("the hook printed %s, want behavior allow", r.stdout)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the hook did not answer after Allow once was clicked")
	}
}
