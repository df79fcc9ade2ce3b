package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/approval"
)

// TestGeminiBeforeTool checks Gemini CLI's answers: {} for allow (its own
// flow goes on), decision deny with the reason for a deny, and for an ask
// a person's answer: their allow is {}, their deny or no answer a deny.
func TestGeminiBeforeTool(t *testing.T) {
	hs := newHookServer(t, 10*time.Second)
	const path = "/api/v1/hooks/gemini"
	answer := func(body []byte) api.GeminiBeforeToolOutput {
		return decodeTo[api.GeminiBeforeToolOutput](t, body)
	}
	cases := []struct {
		note   string
		file   string
		deny   bool
		reason string
	}{
		{note: "read_file: allow", file: "gemini/beforetool-read-file.json"},
		{note: "glob: allow", file: "gemini/beforetool-glob.json"},
		{note: "list_directory: allow", file: "gemini/beforetool-list-directory.json"},
		{note: "search_file_content: allow", file: "gemini/beforetool-search-file-content.json"},
		{note: "write_file: deny", file: "gemini/beforetool-write-file.json", deny: true, reason: "write_file"},
	}
	for _, c := range cases {
		status, body := hs.post(t, hs.agent, path, payload(t, c.file))
		if status != 200 {
			t.Errorf("%s: status %d (%s)", c.note, status, body)
			continue
		}
		out := answer(body)
		if !c.deny {
			if strings.TrimSpace(string(body)) != "{}" {
				t.Errorf("%s: answer %s, want {}", c.note, body)
			}
			continue
		}
		if out.Decision != "deny" || !strings.HasPrefix(out.Reason, "toolgate: ") {
			t.Errorf("%s: answer %s, want decision deny with toolgate's reason", c.note, body)
		}
	}

	shell := payload(t, "gemini/beforetool-run-shell-command.json")
	body := hs.askAnswered(t, path, shell, approval.ChoiceAllowOnce, "")
	if strings.TrimSpace(string(body)) != "{}" {
		t.Errorf("run_shell_command allowed by a person: %s, want {}", body)
	}
	body = hs.askAnswered(t, path, payload(t, "gemini/beforetool-replace.json"), approval.ChoiceDeny, "")
	if out := answer(body); out.Decision != "deny" || !strings.Contains(out.Reason, "alice denied") {
		t.Errorf("replace denied by a person: %s, want deny naming alice", body)
	}
	_, body = hs.post(t, hs.agent, path+"?wait_seconds=0",
		withMembers(t, shell, map[string]any{"tool_input": map[string]any{"command": "make"}}))
	if out := answer(body); out.Decision != "deny" || !strings.Contains(out.Reason, "no one answered") {
		t.Errorf("an ask with no wait: %s, want deny saying no one answered", body)
	}
}
