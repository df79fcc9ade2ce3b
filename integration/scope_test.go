package integration

import (
	"strings"
	"testing"
	"time"
)

// scopedToken makes a token limited to channels through the API.
func scopedToken(t *testing.T, s *Server, name, role string, channels []string) string {
	t.Helper()
	st, _, body := s.Call(s.Token, "POST", "/api/v1/tokens", map[string]any{"name": name, "role": role, "channels": channels}, nil)
	if st != 201 {
		t.Fatalf("create %s token = %d %s", role, st, body)
	}
	return DecodeJSON[struct {
		Secret string `json:"secret"`
	}](t, body).Secret
}

// TestAgentScopeFailsClosed checks that what an agent sends cannot widen
// its scope: a token's channels bind its evaluate, check, batch and hook
// calls; a channel the policy skips ("Skipped for channel") is an admin's
// only, however it is spelled; a call with both command and cmd is a 400;
// and an approver limited to a channel may not write an always-allow rule,
// which would hold on every channel.
func TestAgentScopeFailsClosed(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: agentPolicy})
	cli := scopedToken(t, s, "cli-agent", "agent", []string{"cli"})
	agent := createToken(t, s, "agent", "agent")
	rmHome := map[string]any{"command": "rm -rf ~"}
	eval := func(token, channel string, args map[string]any) (int, string) {
		st, _, body := s.Call(token, "POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": args, "channel_id": channel}, nil)
		return st, string(body)
	}
	cases := []struct {
		note    string
		token   string
		channel string
		args    map[string]any
		status  int
		want    string
	}{
		{note: "a cli token on cli", token: cli, channel: "cli", args: rmHome, status: 200, want: `"level":"deny"`},
		{note: "a cli token on web", token: cli, channel: "web", args: rmHome, status: 403, want: "channel_id"},
		{note: "a cli token on an unchecked channel", token: cli, channel: "x", args: rmHome, status: 403, want: "channel_id"},
		{note: "an agent token on an unchecked channel", token: agent, channel: "x", args: rmHome, status: 403, want: "only an admin"},
		{note: "a zero-width space after web", token: agent, channel: "web\u200b", args: rmHome, status: 403, want: "only an admin"},
		{note: "an agent token on web", token: agent, channel: "web", args: rmHome, status: 200, want: `"level":"deny"`},
		{note: "the admin may ask for a skipped channel", token: s.Token, channel: "x", args: rmHome, status: 200, want: "Skipped for channel"},
		{note: "command and cmd both", token: agent, channel: "web", args: map[string]any{"command": "git status", "cmd": "rm -rf ~"}, status: 400, want: "tool_args.cmd"},
	}
	for _, c := range cases {
		st, body := eval(c.token, c.channel, c.args)
		if st != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want %d naming %s", c.note, st, body, c.status, c.want)
		}
	}
	WaitFor(t, 5*time.Second, "the skipped call counted", func() bool {
		st, b := s.Do("GET", "/metrics", nil)
		return st == 200 && strings.Contains(string(b), "toolgate_skipped_channel_total 1")
	})
	st, _, body := s.Call(cli, "POST", "/api/v1/check", map[string]any{"tool_name": "bash", "tool_args": rmHome, "channel_id": "tui"}, nil)
	if st != 403 {
		t.Errorf("check on a channel outside the token: %d %s", st, body)
	}
	st, _, body = s.Call(cli, "POST", "/api/v1/evaluate/batch", map[string]any{"calls": []any{
		map[string]any{"tool_name": "bash", "tool_args": rmHome, "channel_id": "cli"},
		map[string]any{"tool_name": "bash", "tool_args": rmHome, "channel_id": "x"}}}, nil)
	if st != 403 || !strings.Contains(string(body), "calls[1].channel_id") {
		t.Errorf("a batch with one call outside the token: %d %s", st, body)
	}
	web := scopedToken(t, s, "web-agent", "agent", []string{"web"})
	event := []byte(`{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`)
	if st, b, err := relDo(s, web, "POST", "/api/v1/hooks/claude-code", event); err != nil || st != 403 {
		t.Errorf("a web-only token on a hook (channel cli): %d %s %v", st, b, err)
	}

	// An approver limited to web answers a web ask.
	approver := scopedToken(t, s, "web-approver", "approver", []string{"web"})
	res := make(chan checkResult, 1)
	go func() {
		st, b, err := relDo(s, agent, "POST", "/api/v1/check", map[string]any{"tool_name": "bash",
			"tool_args": map[string]any{"command": "make build"}, "channel_id": "web", "wait_seconds": 10})
		res <- checkResult{status: st, body: b, err: err, at: time.Now()}
	}()
	var id string
	WaitFor(t, 5*time.Second, "the ask", func() bool {
		for _, a := range listApprovals(t, s, approver, "pending") {
			id = a.ID
			return true
		}
		return false
	})
	if st, b := decide(t, s, approver, id, "allow_always"); st != 403 || !strings.Contains(string(b), "allow_once or deny") {
		t.Errorf("a web-only approver's always allow: %d %s, want 403", st, b)
	}
	if st, b := decide(t, s, approver, id, "allow_once"); st != 200 {
		t.Errorf("a web-only approver's allow once: %d %s", st, b)
	}
	if a := answered(t, res, 10*time.Second); a.Decision != "allow" {
		t.Errorf("the check after allow once: %+v", a)
	}
	if st, b := s.Do("GET", "/api/v1/permissions/approval-overrides", nil); st != 200 || strings.Contains(string(b), "make build") {
		t.Errorf("an override was written: %d %s", st, b)
	}
}
