package api_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/api"
)

// workspacePolicy allows ls and cat and reads anywhere inside the
// workspace, and asks for anything outside it.
const workspacePolicy = `permissions:
  enabled: true
  schema: tiered_policy
  permission_mode: normal
  defaults: {"*": ask}
  tools:
    read_file: allow
    bash: ask
  rules:
    - {id: ls_ok, tools: [bash], pattern: "ls", action: allow}
    - {id: rm_r_ok, tools: [bash], pattern: "rm -r important", action: allow}
  external_directory:
    "*": ask
`

// TestHookWorkspaceIsPinned checks that the model cannot move the
// workspace: a session's later cwd (Codex reports the model-chosen workdir
// there) is the command's working directory, judged as a path, and the
// workspace stays the session's first cwd, the hook's workspace parameter
// or the server's --workspace. An ask answers deny here (no one answers
// within wait_seconds=0).
func TestHookWorkspaceIsPinned(t *testing.T) {
	project, home := realDir(t), realDir(t)
	if err := os.Mkdir(filepath.Join(home, "important"), 0o700); err != nil {
		t.Fatal(err)
	}
	hs := newHookServerWith(t, workspacePolicy, api.Deps{})
	serverPinned := newHookServerWith(t, workspacePolicy, api.Deps{HookWorkspace: project})
	bash := func(session, cwd, command string) []byte {
		return mustJSON(t, map[string]any{"hook_event_name": "PreToolUse", "session_id": session, "cwd": cwd,
			"tool_name": "Bash", "tool_input": map[string]any{"command": command}})
	}
	pinned := "/api/v1/hooks/claude-code?wait_seconds=0&workspace=" + url.QueryEscape(project)
	cases := []struct {
		note   string
		server *hookServer
		path   string
		bodies [][]byte // all posted in order; the last one's answer counts
		want   string
	}{
		{note: "the session's first cwd is its workspace", server: hs, path: "/api/v1/hooks/claude-code?wait_seconds=0",
			bodies: [][]byte{bash("s1", project, "ls")}, want: "allow"},
		{note: "a later cwd of $HOME does not make rm -r important an inside call", server: hs, path: "/api/v1/hooks/claude-code?wait_seconds=0",
			bodies: [][]byte{bash("s2", project, "ls"), bash("s2", home, "rm -r important")}, want: "deny"},
		{note: "the same call in the workspace is allowed", server: hs, path: "/api/v1/hooks/claude-code?wait_seconds=0",
			bodies: [][]byte{bash("s3", project, "ls"), bash("s3", project, "rm -r important")}, want: "allow"},
		{note: "the hook's workspace parameter wins over the first cwd", server: hs, path: pinned,
			bodies: [][]byte{bash("s4", home, "rm -r important")}, want: "deny"},
		{note: "the pinned workspace allows its own calls", server: hs, path: pinned,
			bodies: [][]byte{bash("s5", project, "ls")}, want: "allow"},
		{note: "the server's --workspace wins over the first cwd", server: serverPinned, path: "/api/v1/hooks/codex?wait_seconds=0",
			bodies: [][]byte{bash("s6", home, "rm -r important")}, want: "deny"},
	}
	for _, c := range cases {
		var body []byte
		for _, b := range c.bodies {
			var status int
			status, body = c.server.post(t, c.server.agent, c.path, b)
			if status != 200 {
				t.Fatalf("%s: status %d %s", c.note, status, body)
			}
		}
		if got := preToolUseDecision(t, body); got != c.want {
			t.Errorf("%s: %s, want %s", c.note, body, c.want)
		}
	}
}

// TestHookHomeIsTheAgents checks that ~ names the home the hook sends
// (query parameter or header), not the server user's.
func TestHookHomeIsTheAgents(t *testing.T) {
	project := realDir(t)
	hs := newHookServerWith(t, workspacePolicy, api.Deps{HookWorkspace: project})
	read := mustJSON(t, map[string]any{"hook_event_name": "PreToolUse", "session_id": "h", "cwd": project,
		"tool_name": "Read", "tool_input": map[string]any{"file_path": "~/notes.txt"}})
	const path = "/api/v1/hooks/claude-code?wait_seconds=0"
	cases := []struct {
		note, query, header, want string
	}{
		{note: "home = the workspace: ~/notes.txt is inside", query: "&home=" + url.QueryEscape(project), want: "allow"},
		{note: "the home header of an http hook", header: project, want: "allow"},
		{note: "no home: the server user's, outside the workspace", want: "deny"},
	}
	for _, c := range cases {
		status, body := hs.postWithHeader(t, path+c.query, read, api.HeaderHookHome, c.header)
		if status != 200 {
			t.Fatalf("%s: status %d %s", c.note, status, body)
		}
		if got := preToolUseDecision(t, body); got != c.want {
			t.Errorf("%s: %s, want %s", c.note, body, c.want)
		}
	}
	for _, bad := range []string{"&home=relative/dir", "&workspace=proj", "&user=a%20b", "&ask=maybe"} {
		if status, body := hs.post(t, hs.agent, path+bad, read); status != 400 {
			t.Errorf("%s: %d %s, want 400", bad, status, body)
		}
	}
}

// realDir is a temporary directory with its symlinks resolved, so that the
// engine's resolved paths and the test's agree.
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// preToolUseDecision reads permissionDecision from a Claude Code answer,
// or "none" from Codex's {} (no decision: allowed).
func preToolUseDecision(t *testing.T, body []byte) string {
	t.Helper()
	out := decodeTo[api.CodexPreToolUseOutput](t, body)
	if out.HookSpecificOutput == nil {
		return "allow"
	}
	return out.HookSpecificOutput.PermissionDecision
}
