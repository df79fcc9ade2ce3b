package logcall_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/logcall"
	"github.com/toolgate/toolgate/store/decisionlog"
)

// openLog opens a real decision log file, as the server does.
func openLog(t *testing.T) *decisionlog.Log {
	t.Helper()
	l, err := decisionlog.Open(filepath.Join(t.TempDir(), "decisions.db"), decisionlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func flush(t *testing.T, l *decisionlog.Log) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLogRedactsCalls: the writer redacts the summary and, with full
// arguments, the request it keeps; the caller's call is left as it was.
func TestLogRedactsCalls(t *testing.T) {
	l := openLog(t)
	call := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "mysql -pSECRET db"}), Explain: true}
	l.Enqueue(decisionlog.Entry{Tool: "bash", Level: "ask", Call: logcall.Of(call, nil), FullArgs: true})
	l.Enqueue(decisionlog.Entry{Tool: "bash", Level: "ask", Call: logcall.Of(call, nil)})
	flush(t, l)
	page, err := l.Query(context.Background(), decisionlog.Query{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range page.Entries {
		if e.Summary != "mysql -p[REDACTED] db" {
			t.Errorf("entry %d summary: got %q, want the redacted command", e.ID, e.Summary)
		}
	}
	recent, _ := l.Recent(context.Background(), 10)
	if len(recent) != 1 || recent[0].Request.ToolArgs["command"] != "mysql -p[REDACTED] db" {
		t.Fatalf("full args: got %+v, want one redacted request", recent)
	}
	if logcall.Request(recent[0].Request).Explain {
		t.Errorf("the logged request replays with explain on")
	}
	if call.Call.Args()["command"] != "mysql -pSECRET db" {
		t.Errorf("the caller's call was changed: %v", call.Call.Args())
	}
}

// TestLogShadowOutcome: a call decided by a policy with a shadow rule that
// would decide otherwise is logged with that outcome; without the policy,
// or when the shadow rule agrees, nothing is.
func TestLogShadowOutcome(t *testing.T) {
	pol, problems := engine.Compile(map[string]any{"schema": "tiered_policy", "tools": map[string]any{"bash": "ask"},
		"rules": []any{map[string]any{"id": "no_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "deny", "mode": "shadow"}}},
		nil, engine.Options{})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	push := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "git push origin main"})}
	ls := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "ls"})}
	for _, c := range []struct {
		note      string
		call      decisionlog.Call
		wantLevel string
		wantRule  string
	}{
		{"shadow rule would deny", logcall.Of(push, pol), "deny", "tiered_policy:rules:deny:rules[no_push]"},
		{"no policy given", logcall.Of(push, nil), "", ""},
		{"shadow rule does not match", logcall.Of(ls, pol), "", ""},
	} {
		e := decisionlog.Entry{Tool: "bash", Level: "ask", MatchedRule: "tools.bash", Call: c.call}
		e.Prepare()
		if e.ShadowLevel != c.wantLevel || e.ShadowRule != c.wantRule || e.Call != nil {
			t.Errorf("%s: got %q %q (call %v), want %q %q and the call dropped", c.note, e.ShadowLevel, e.ShadowRule, e.Call, c.wantLevel, c.wantRule)
		}
	}
}

// TestLoggedRequestRoundTrip: what the log keeps of a call replays as the
// call (scope included), without the session, token, home or trace.
func TestLoggedRequestRoundTrip(t *testing.T) {
	req := &engine.Request{Call: engine.NewCall("read_file", map[string]any{"path": "/w/a", "token": "ghp_0123456789abcdefghijklmnopqrstuvwxyz"}),
		ChannelID: "feishu", Workspace: "/w", Home: "/home/u", SessionID: "s1", TokenID: "tok", Explain: true,
		Scope: &engine.Scope{AvatarMode: true, GroupDigitalAvatar: true, PrincipalUserID: "ou_1"}}
	got := logcall.Request(logcall.Logged(req))
	want := &engine.Request{Call: engine.NewCall("read_file", got.Call.Args()), ChannelID: "feishu", Workspace: "/w",
		Scope: &engine.Scope{AvatarMode: true, GroupDigitalAvatar: true, PrincipalUserID: "ou_1"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got.Call.Args()["path"] != "/w/a" || got.Call.Args()["token"] == req.Call.Args()["token"] {
		t.Errorf("args %v: want the path kept and the token redacted", got.Call.Args())
	}
}
