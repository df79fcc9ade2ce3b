package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// TestAddTrustedDirectory: /add-dir of docs/decisions.md on a tiered policy.
func TestAddTrustedDirectory(t *testing.T) {
	s, _ := openFixture(t, "config.yaml")
	res, err := s.AddTrustedDirectory("~/projects/app/", testDirTools)
	if err != nil {
		t.Fatal(err)
	}
	if res.Dir != "/home/u/projects/app" || !res.Tiered || len(res.Created) != 2 {
		t.Fatalf("result %+v", res)
	}
	if id := res.Created[0].ID; id != "cli_trusted_path_f799cb970afa5597" {
		t.Errorf("path override id %v", id)
	}
	if p := res.Created[1].Pattern; p != "re:.*/home/u/projects/app.*" {
		t.Errorf("shell pattern %v", p)
	}
	sec, _, _ := s.Section()
	if ext := sec["external_directory"].(map[string]any); ext["/home/u/projects/app"] != "allow" || ext["*"] != "ask" {
		t.Errorf("external_directory %v", ext)
	}
	d := inForce(s).Evaluate(&engine.Request{Call: engine.NewCall("write_file", map[string]any{"path": "/home/u/projects/app/main.go"}), Workspace: "/work/ws"})
	if d.Level != policy.Allow {
		t.Errorf("write in the trusted dir: got %v %s, want allow", d.Level, d.MatchedRule)
	}
	again, err := s.AddTrustedDirectory("/home/u/projects/app", testDirTools)
	if err != nil || len(again.Created) != 0 || len(again.Existing) != 2 {
		t.Errorf("second add-dir: %+v %v; want nothing created", again, err)
	}
	if _, err := s.AddTrustedDirectory("  ", testDirTools); err == nil {
		t.Errorf("an empty path was accepted")
	}
}

func TestAddTrustedDirectoryLegacy(t *testing.T) {
	s, _ := openFixture(t, "legacy.yaml")
	res, err := s.AddTrustedDirectory("data/../shared", testDirTools)
	if err != nil {
		t.Fatal(err)
	}
	if res.Dir != "/work/ws/shared" || res.Tiered || len(res.Created) != 0 {
		t.Errorf("result %+v; want the dir against the workspace and no overrides", res)
	}
	sec, _, _ := s.Section()
	if _, ok := sec["approval_overrides"]; ok {
		t.Errorf("approval_overrides written on a legacy policy")
	}
	if ext := sec["external_directory"].(map[string]any); ext["*"] != "ask" || ext["/work/ws/shared"] != "allow" {
		t.Errorf("external_directory %v", ext)
	}
}

// TestDefaultConfig: a fresh dir gets the safe default of docs/configuration.md#permissions-keys.
func TestDefaultConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "config")
	s, err := Open(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := string(readFile(t, filepath.Join(dir, ConfigFile))); got != DefaultConfig {
		t.Errorf("config.yaml is not the default")
	}
	if ps := s.Problems(); len(ps) != 0 {
		t.Errorf("default config problems: %v", ps)
	}
	if _, src := s.BuiltinRules(); src != BuiltinSourcePackage {
		t.Errorf("builtin source %q, want package", src)
	}
	cases := []struct {
		note string
		req  engine.Request
		want policy.Level
	}{
		{"read-only path tools allow", engine.Request{Call: engine.NewCall("read_file", map[string]any{"path": "/work/ws/a.go"})}, policy.Allow},
		{"shell asks", engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make"})}, policy.Ask},
		{"write tools ask", engine.Request{Call: engine.NewCall("write_file", map[string]any{"path": "/work/ws/a.go"})}, policy.Ask},
		{"external paths ask", engine.Request{Call: engine.NewCall("read_file", map[string]any{"path": "/etc/passwd"})}, policy.Ask},
		{"unknown tools ask", engine.Request{Call: engine.NewCall("mcp_fetch_webpage", map[string]any{"url": "https://x"})}, policy.Ask},
	}
	for _, c := range cases {
		if d := inForce(s).Evaluate(&c.req); d.Level != c.want {
			t.Errorf("%s: got %v (%s), want %v", c.note, d.Level, d.MatchedRule, c.want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, ConfigFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config.yaml mode: %v %v", fi.Mode(), err)
	}
}

func TestOnChangeAfterWrite(t *testing.T) {
	s, _ := openFixture(t, "config.yaml")
	calls := 0
	s.OnChange(func() { calls++ })
	if _, err := s.SetToolLevel("bash", "deny"); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("OnChange called %d times after a write, want 1", calls)
	}
	if _, err := s.DeleteTool("nope"); err == nil || calls != 1 {
		t.Errorf("a failed edit: err %v, calls %d", err, calls)
	}
}

func TestBrokenBuiltinKeepsLastGood(t *testing.T) {
	s, dir := openFixture(t, "config.yaml")
	path := filepath.Join(dir, BuiltinFile)
	writeFile(t, path, []byte("rules:\n  - id: no_make\n    tools: [bash]\n    pattern: make\n    action: deny\n"))
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, []byte("rules: [\n"))
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	rules, src := s.BuiltinRules()
	if len(rules) != 1 || src != path {
		t.Errorf("got %d rules from %q, want the last good user file", len(rules), src)
	}
	if !hasProblem(s.Problems(), BuiltinFile, "") {
		t.Errorf("problems %v, want a builtin_rules.yaml problem", s.Problems())
	}
	if d := inForce(s).Evaluate(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make"})}); d.Level != policy.Deny {
		t.Errorf("got %v, want the last good deny", d.Level)
	}
}

func TestResolveConfigDir(t *testing.T) {
	home, _ := os.UserHomeDir()
	t.Setenv(EnvConfigDir, "/env/dir")
	if got, _ := ResolveConfigDir("/flag/dir"); got != "/flag/dir" {
		t.Errorf("flag: got %q", got)
	}
	if got, _ := ResolveConfigDir(""); got != "/env/dir" {
		t.Errorf("env: got %q", got)
	}
	t.Setenv(EnvConfigDir, "")
	if got, _ := ResolveConfigDir(""); got != filepath.Join(home, ".jiuwenswarm", "config") {
		t.Errorf("default: got %q", got)
	}
	if got, _ := ResolveConfigDir("~/cfg"); got != filepath.Join(home, "cfg") {
		t.Errorf("~: got %q", got)
	}
}

// BenchmarkEngine: readers take the engine without locks.
func BenchmarkEngine(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(dir, testOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = inForce(s)
		}
	})
}
