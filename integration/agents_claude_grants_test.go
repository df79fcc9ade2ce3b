package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestClaudeCodeSessionGrant runs the real Claude Code through one session
// in which a person answers the first ask with "allow for this session":
// the same command then runs again in that session with no one asked, the
// same command chained with one that overwrites a canary is still asked
// (and, unanswered, does not run: the canary stays), and a new session asks again. What is
// checked is what Claude Code did on disk, and the grant and the decision
// log as toolgate reports them.
func TestClaudeCodeSessionGrant(t *testing.T) {
	claude := agentBinary(t, "claude-code")
	s := StartServer(t, ServerOptions{ConfigYAML: agentPolicy})
	defer s.Stop()
	agent := createToken(t, s, "claude", "agent")
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	canary := filepath.Join(home, "important", "canary.txt")
	writeFile(t, canary, "keep me\n")
	writeFile(t, filepath.Join(ws, "README"), "ws\n")
	env := []string{"HOME=" + home, "USER=tester", "TOOLGATE_URL=" + s.URL, "TOOLGATE_TOKEN=" + agent}
	if r := runCLIEnv(t, ws, env, "setup", "claude-code", "--wait", agentHookWait, "--workspace", ws); r.code != 0 {
		t.Fatalf("toolgate setup: %s", r.stderr)
	}
	const cmd = "echo run >> ran.txt"
	ran := filepath.Join(ws, "ran.txt")

	asks := runClaudeAnswering(t, claude, s, ws, env, "allow_session",
		map[string]any{"command": cmd}, map[string]any{"command": cmd},
		map[string]any{"command": cmd + " && echo evil > " + canary})
	if got := readOr(ran); got != "run\nrun\n" {
		t.Errorf("in the granted session the command ran %q, want twice", got)
	}
	if problem := unchanged(canary, "keep me\n"); problem != "" {
		t.Errorf("the chained command ran under the grant: %s", problem)
	}
	if asks != 2 {
		t.Errorf("the session put %d asks to a person, want 2 (the first call and the chained one)", asks)
	}

	var grants struct {
		Grants []struct {
			ID        string `json:"id"`
			ToolName  string `json:"tool_name"`
			Scope     string `json:"scope"`
			Pattern   string `json:"pattern"`
			SessionID string `json:"session_id"`
			GrantedBy string `json:"granted_by"`
		} `json:"grants"`
	}
	st, body := s.Do("GET", "/api/v1/grants", nil)
	if st != 200 || json.Unmarshal(body, &grants) != nil {
		t.Fatalf("GET /api/v1/grants: %d %s", st, body)
	}
	if len(grants.Grants) != 1 || grants.Grants[0].Pattern != cmd || grants.Grants[0].SessionID == "" {
		t.Fatalf("grants: %s", body)
	}
	g := grants.Grants[0]
	if !waitDecisionByRule(s, "grants["+g.ID+"]", g.SessionID) {
		t.Errorf("the decision log has no call allowed by grant %s in session %s", g.ID, g.SessionID)
	}

	// The same call in that session over /check, with the agent's token:
	// the grant answers it; `toolgate grants` lists it, `toolgate grants
	// revoke` takes it back, and the call asks again.
	check := func(token string) (string, string) {
		st, body := s.DoToken(token, "POST", "/api/v1/check", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": cmd},
			"channel_id": "cli", "workspace": ws, "session_id": g.SessionID, "wait_seconds": 0})
		var out checkAnswer
		if st != 200 || json.Unmarshal(body, &out) != nil {
			t.Fatalf("check: %d %s", st, body)
		}
		var rule struct {
			MatchedRule string `json:"matched_rule"`
		}
		_ = json.Unmarshal(body, &rule)
		return out.Decision, rule.MatchedRule
	}
	if d, rule := check(agent); d != "allow" || !strings.Contains(rule, "grants["+g.ID+"]") {
		t.Errorf("the granted call over /check: %s %s", d, rule)
	}
	// The session id is the agent's to name: another token naming it
	// gains nothing.
	if d, _ := check(s.Token); d != "pending" {
		t.Errorf("another token naming the granted session: %s, want pending (asked)", d)
	}
	admin := []string{"TOOLGATE_URL=" + s.URL, "TOOLGATE_TOKEN=" + s.Token}
	if r := runCLIEnv(t, ws, admin, "grants", "--session", g.SessionID); r.code != 0 || !strings.Contains(r.stdout, g.ID) || !strings.Contains(r.stdout, cmd) {
		t.Errorf("toolgate grants: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := runCLIEnv(t, ws, admin, "grants", "revoke", g.ID); r.code != 0 {
		t.Errorf("toolgate grants revoke: exit %d, %q", r.code, r.stderr)
	}
	if d, _ := check(agent); d != "pending" {
		t.Errorf("after the revoke the call is %s, want pending (asked)", d)
	}

	// A new session: the grant does not hold, and no one answers.
	if asks := runClaudeAnswering(t, claude, s, ws, env, "", map[string]any{"command": cmd}); asks != 1 {
		t.Errorf("a new session put %d asks to a person, want 1", asks)
	}
	if got := readOr(ran); got != "run\nrun\n" {
		t.Errorf("a new session ran the command under another session's grant: %q", got)
	}
}

// runClaudeAnswering runs Claude Code once, the model stand-in asking for
// each Bash call in turn, while a person answers the first ask with
// choice ("" answers none) and leaves every later one unanswered. It
// returns how many asks were put to the person.
func runClaudeAnswering(t *testing.T, claude string, s *Server, ws string, env []string, choice string, calls ...map[string]any) int {
	t.Helper()
	stub := newAnthropicStubSeq(t, "Bash", calls...)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "do the task", "--permission-mode", "bypassPermissions", "--output-format", "json")
	cmd.Dir = ws
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + stub.srv.URL,
		"ANTHROPIC_API_KEY=sk-ant-stub", "IS_SANDBOX=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan struct{})
	var mu sync.Mutex
	seen := map[string]bool{}
	// Asks an earlier run left pending (its hook gave up waiting; the ask
	// stays until it expires) are not this run's.
	before := map[string]bool{}
	var earlier struct {
		Approvals []wsApproval `json:"approvals"`
	}
	if _, body := s.Do("GET", "/api/v1/approvals?status=pending", nil); json.Unmarshal(body, &earlier) == nil {
		for _, a := range earlier.Approvals {
			before[a.ID] = true
		}
	}
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			var page struct {
				Approvals []wsApproval `json:"approvals"`
			}
			st, body := s.Do("GET", "/api/v1/approvals?status=pending", nil)
			if st != 200 || json.Unmarshal(body, &page) != nil {
				continue
			}
			for _, a := range page.Approvals {
				if before[a.ID] {
					continue
				}
				mu.Lock()
				first := len(seen) == 0
				fresh := !seen[a.ID]
				seen[a.ID] = true
				mu.Unlock()
				if fresh && first && choice != "" {
					s.Do("POST", "/api/v1/approvals/"+a.ID+"/decision", map[string]any{"choice": choice, "comment": "the test"})
				}
			}
		}
	}()
	err := cmd.Run()
	close(done)
	if ctx.Err() != nil {
		t.Fatalf("claude did not finish: %s", tail(errb.String()))
	}
	if got := len(stub.toolResults()); got != len(calls) {
		t.Fatalf("claude sent %d tool results for %d calls (exit %s): %s %s", got, len(calls), errString(err), tail(out.String()), tail(errb.String()))
	}
	mu.Lock()
	defer mu.Unlock()
	return len(seen)
}

// waitDecisionByRule waits up to 3 s for a logged decision of session
// whose matched_rule contains rule.
func waitDecisionByRule(s *Server, rule, session string) bool {
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		st, body := s.Do("GET", "/api/v1/decisions?session="+session+"&level=allow", nil)
		if st == 200 && strings.Contains(string(body), rule) {
			return true
		}
	}
	return false
}

// readOr is a file's text, or "" when it cannot be read.
func readOr(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
