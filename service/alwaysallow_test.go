package service_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
)

// openPolicyFixture copies a store/testdata file to a temp dir as
// config.yaml and opens the policy service over it.
func openPolicyFixture(t *testing.T, fixture string) (*service.Policy, *inforce.Holder, string) {
	t.Helper()
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join("..", "store", "testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.ConfigFile), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := inforce.Open(dir, inforce.Options{Workspace: "/work/ws", HomeDir: "/home/u", ResolvePath: func(p string) string { return p },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return service.NewPolicy(s), s, dir
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestAlwaysAllow: docs/decisions.md "always allow": only on ask, the exact
// command or first path value, never twice; the new override decides.
func TestAlwaysAllow(t *testing.T) {
	p, s, _ := openPolicyFixture(t, "config.yaml")
	build := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "  npm run build "})}
	o, created, err := p.AlwaysAllow(t.Context(), build, "")
	if err != nil || !created {
		t.Fatalf("got %v, %v, %v", o, created, err)
	}
	if o.Map()["id"] != "user_allow_bash_command_npm_run_build" || o.Map()["pattern"] != "npm run build" || o.Map()["match_type"] != "command" ||
		o.Map()["action"] != "allow" || o.Map()["source"] != store.SourceUserApproval {
		t.Errorf("override %v", o)
	}
	if d := s.Engine().Evaluate(build); d.Level != policy.Allow || !strings.Contains(d.MatchedRule, "approval_overrides") {
		t.Errorf("after always allow: got %v %s, want allow by the override", d.Level, d.MatchedRule)
	}
	if _, _, err := p.AlwaysAllow(t.Context(), build, ""); !errors.Is(err, store.ErrNotAsk) {
		t.Errorf("second time: got %v, want store.ErrNotAsk (it is allowed now)", err)
	}
	read := &engine.Request{Call: engine.NewCall("read_file", map[string]any{"path": "/work/ws/a"})}
	if _, _, err := p.AlwaysAllow(t.Context(), read, ""); !errors.Is(err, store.ErrNotAsk) {
		t.Errorf("an allowed call: got %v, want store.ErrNotAsk", err)
	}
	write := &engine.Request{Call: engine.NewCall("write_file", map[string]any{"content": "x", "path": "/work/ws/out.txt", "backup": "/work/ws/b"})}
	o, created, err = p.AlwaysAllow(t.Context(), write, "")
	if err != nil || !created || o.Map()["pattern"] != "/work/ws/out.txt" || o.Map()["match_type"] != "path" {
		t.Errorf("path tool: got %v, %v, %v; want the path value", o, created, err)
	}
	if _, _, err := p.AlwaysAllow(t.Context(), &engine.Request{Call: engine.NewCall("mcp_fetch_webpage", map[string]any{"url": "https://x"})}, ""); !errors.Is(err, store.ErrNoPattern) && !errors.Is(err, store.ErrNotAsk) {
		t.Errorf("network tool: got %v, want store.ErrNoPattern", err)
	}
}

// TestAlwaysAllowNeverTwice: when the override exists but the call still
// asks (the external-directory check asks), the existing entry comes back.
func TestAlwaysAllowNeverTwice(t *testing.T) {
	p, s, dir := openPolicyFixture(t, "config.yaml")
	req := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "cat /etc/hosts"}), Workspace: "/work/ws"}
	if _, created, err := p.AlwaysAllow(t.Context(), req, ""); err != nil || !created {
		t.Fatalf("first: %v %v", created, err)
	}
	if d := s.Engine().Evaluate(req); d.Level != policy.Ask {
		t.Fatalf("the fixture no longer asks for this call (%v %s), so the test proves nothing", d.Level, d.MatchedRule)
	}
	o, created, err := p.AlwaysAllow(t.Context(), req, "")
	if err != nil || created || o.Map()["id"] != "user_allow_bash_command_cat_etc_hosts" {
		t.Errorf("second: got %v, %v, %v; want the existing override, not created", o, created, err)
	}
	if n := strings.Count(string(readFile(t, filepath.Join(dir, store.ConfigFile))), "id: user_allow_bash_command_cat_etc_hosts"); n != 1 {
		t.Errorf("override written %d times", n)
	}
}

// TestAlwaysAllowIsLiteral: a remembered command that looks like a pattern
// (a glob, or text starting with re:) allows only itself.
func TestAlwaysAllowIsLiteral(t *testing.T) {
	for _, cmd := range []string{"cat *", "re:.*", "ls [ab]?"} {
		t.Run(cmd, func(t *testing.T) {
			dir := t.TempDir()
			s, err := inforce.Open(dir, inforce.Options{Workspace: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			p := service.NewPolicy(s)
			req := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": cmd}), ChannelID: "web", Workspace: dir}
			if _, created, err := p.AlwaysAllow(t.Context(), req, ""); err != nil || !created {
				t.Fatalf("AlwaysAllow: created %v, err %v", created, err)
			}
			if got := s.Engine().Evaluate(req); got.Level != policy.Allow {
				t.Errorf("the remembered command: got %s %q, want allow", got.Level, got.MatchedRule)
			}
			other := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "cat secrets.txt"}), ChannelID: "web", Workspace: dir}
			if got := s.Engine().Evaluate(other); got.Level == policy.Allow {
				t.Errorf("another command: got allow by %q, want it not allowed by the override", got.MatchedRule)
			}
		})
	}
}

// TestAlwaysAllowByRecordsWhoAndWhen: an answer given by a person records
// approved_by and created_at in the override (the overrides page
// says who approved), and the override still decides.
func TestAlwaysAllowByRecordsWhoAndWhen(t *testing.T) {
	p, s, dir := openPolicyFixture(t, "config.yaml")
	req := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make deploy"})}
	before := time.Now().UTC().Add(-time.Second)
	o, created, err := p.AlwaysAllow(t.Context(), req, " alice ")
	if err != nil || !created {
		t.Fatalf("got %v, %v, %v", o, created, err)
	}
	if o.Map()["approved_by"] != "alice" {
		t.Errorf("approved_by: got %v, want alice", o.Map()["approved_by"])
	}
	at, err := time.Parse(time.RFC3339, fmt.Sprint(o.Map()["created_at"]))
	if err != nil || at.Before(before.Truncate(time.Second)) || at.After(time.Now().UTC().Add(time.Second)) {
		t.Errorf("created_at: got %v (%v), want now in RFC 3339", o.Map()["created_at"], err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, store.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "approved_by: alice") {
		t.Errorf("config.yaml does not record who approved")
	}
	if d := s.Engine().Evaluate(req); d.Level != policy.Allow {
		t.Errorf("after always allow: got %v %s, want allow", d.Level, d.MatchedRule)
	}
}

// TestAlwaysAllowPathShapes: "always allow" remembers the first path value
// as the engine finds it (engine.FirstPathValue: lists and nested objects,
// ) and the command as the engine reads it (an argv array
// joined with quoting); a command the engine cannot read is not remembered.
func TestAlwaysAllowPathShapes(t *testing.T) {
	cases := []struct {
		note        string
		tool        string
		args        map[string]any
		wantPattern string
		wantType    string
	}{
		{"a list of paths", "write_file", map[string]any{"paths": []any{"/work/ws/a.txt", "/work/ws/b.txt"}}, "/work/ws/a.txt", "path"},
		{"a list under path", "write_file", map[string]any{"path": []any{"/work/ws/c.txt"}}, "/work/ws/c.txt", "path"},
		{"a nested object", "write_file", map[string]any{"args": map[string]any{"path": "/work/ws/d.txt"}}, "/work/ws/d.txt", "path"},
		{"objects in a list", "edit_file", map[string]any{"edits": []any{map[string]any{"file_path": "/work/ws/e.txt"}}}, "/work/ws/e.txt", "path"},
		{"an argv command", "bash", map[string]any{"command": []any{"npm", "run", "a b"}}, "npm run 'a b'", "command"},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			p, _, _ := openPolicyFixture(t, "config.yaml")
			o, created, err := p.AlwaysAllow(t.Context(), &engine.Request{Call: engine.NewCall(c.tool, c.args)}, "")
			if err != nil || !created {
				t.Fatalf("got %v, %v, %v", o, created, err)
			}
			if o.Map()["pattern"] != c.wantPattern || o.Map()["match_type"] != c.wantType {
				t.Errorf("got pattern %v (%v), want %q (%s)", o.Map()["pattern"], o.Map()["match_type"], c.wantPattern, c.wantType)
			}
		})
	}
	p, _, _ := openPolicyFixture(t, "config.yaml")
	if o, _, err := p.AlwaysAllow(t.Context(), &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": 42.0})}, ""); err == nil {
		t.Errorf("an unreadable command: got %v, want an error", o)
	}
}

// TestAlwaysAllowChecksTheDocumentOnDisk: "is this call still an ask?" is
// decided on the document the override would be written into, read under
// the store's lock: bash allowed by an edit made elsewhere (whether or not
// the store has loaded it yet) makes the answer ErrNotAsk, and nothing is
// written.
func TestAlwaysAllowChecksTheDocumentOnDisk(t *testing.T) {
	p, _, dir := openPolicyFixture(t, "config.yaml")
	path := filepath.Join(dir, store.ConfigFile)
	req := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make deploy"})}
	raw := strings.Replace(string(readFile(t, path)), "bash: ask   # shell needs approval", "bash: allow", 1)
	if !strings.Contains(raw, "bash: allow") {
		t.Fatal("the fixture no longer has the bash line this test edits")
	}
	if err := os.WriteFile(path, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.AlwaysAllow(t.Context(), req, ""); !errors.Is(err, store.ErrNotAsk) {
		t.Errorf("got %v, want ErrNotAsk (bash is allowed on disk)", err)
	}
	if got := string(readFile(t, path)); got != raw {
		t.Errorf("config.yaml changed:\n%s", got)
	}
}
