package store

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

func hasProblem(ps []policy.Problem, path, contains string) bool {
	for _, p := range ps {
		if p.Path == path && strings.Contains(p.Message, contains) {
			return true
		}
	}
	return false
}

const brokenPolicy = `other: keep
permissions:
  schema: tiered_policy
  tools:
    bash: sometimes
    read_file: allow
  rules:
    - id: good
      tools: [write_file]
      pattern: 're:\.env$'
      action: deny
    - id: bad_regex
      tools: [bash]
      pattern: 're:(unclosed'
      action: deny
    - id: good
      tools: [bash]
      pattern: ls
      action: allow
    - id: mixed
      tools: [bash, read_file]
      pattern: x
      action: deny
`

// TestValidationReportsEveryProblemAtOnce: each broken entry is reported by
// its place and is inert; the rest of the policy keeps deciding (D4).
func TestValidationReportsEveryProblemAtOnce(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ConfigFile), []byte(brokenPolicy))
	s, err := Open(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ps := s.Problems()
	for _, want := range []struct{ note, path, msg string }{
		{"invalid level", "permissions.tools.bash", "invalid level"},
		{"bad regex", "permissions.rules[1].pattern", ""},
		{"duplicate id", "permissions.rules[2].id", "duplicate"},
		{"mixed categories", "permissions.rules[3].tools", "mixes"},
	} {
		if !hasProblem(ps, want.path, want.msg) {
			t.Errorf("%s: no problem at %s containing %q; got %v", want.note, want.path, want.msg, ps)
		}
	}
	d := inForce(s).Evaluate(&engine.Request{Call: engine.NewCall("write_file", map[string]any{"path": "/work/ws/.env"}), Workspace: "/work/ws"})
	if d.Level != policy.Deny {
		t.Errorf("the good rule still decides: got %v (%s), want deny", d.Level, d.MatchedRule)
	}
}

// TestNotYAMLAtStartAsksForEverything: with no last good policy, a file that
// is not YAML is reported and nothing is allowed without a person.
func TestNotYAMLAtStartAsksForEverything(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ConfigFile), []byte("permissions: [unclosed\n  tools: {\n"))
	s, err := Open(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !hasProblem(s.Problems(), ConfigFile, "line") {
		t.Errorf("got %v, want a config.yaml problem naming the line", s.Problems())
	}
	if d := inForce(s).Evaluate(&engine.Request{Call: engine.NewCall("read_file", map[string]any{"path": "/work/ws/a"})}); d.Level != policy.Ask {
		t.Errorf("got %v, want ask", d.Level)
	}
	if _, err := s.SetToolLevel("bash", "allow"); !errors.Is(err, ErrBrokenConfig) {
		t.Errorf("edit of a broken file: got %v, want ErrBrokenConfig", err)
	}
}

func TestPermissionsNotAMapping(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ConfigFile), []byte("permissions: [1, 2]\n"))
	s, err := Open(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !hasProblem(s.Problems(), "permissions", "must be a mapping") {
		t.Errorf("got %v", s.Problems())
	}
}

// TestEditRejectsNewProblems: an edit that would add a problem writes
// nothing, even when the file already has problems of its own.
func TestEditRejectsNewProblems(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ConfigFile), []byte(brokenPolicy))
	s, err := Open(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := readFile(t, filepath.Join(dir, ConfigFile))
	cases := []struct {
		note, path string
		edit       func() error
	}{
		{"bad regex", "permissions.rules[4].pattern", func() error {
			_, err := s.CreateRule(ruleOf(map[string]any{"id": "x", "tools": []any{"bash"}, "pattern": "re:(", "action": "deny"}))
			return err
		}},
		{"bad action", "permissions.rules[4].action", func() error {
			_, err := s.CreateRule(ruleOf(map[string]any{"id": "x", "tools": []any{"bash"}, "pattern": "ls", "action": "maybe"}))
			return err
		}},
		{"bad level", "permissions.tools.grep", func() error { _, err := s.SetToolLevel("grep", "perhaps"); return err }},
		{"bad mode", "permissions.permission_mode", func() error {
			_, err := s.SetSettings(policy.DecodeSettingsPatch(policy.MappingOf(map[string]any{"permission_mode": "paranoid"})))
			return err
		}},
		{"unknown tool in a patch", "permissions.rules[0].tools", func() error {
			_, err := s.UpdateRule("good", policy.DecodeRulePatch(policy.MappingOf(map[string]any{"tools": []any{"no_such_tool"}})))
			return err
		}},
	}
	for _, c := range cases {
		err := c.edit()
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: got %v, want a *ValidationError", c.note, err)
			continue
		}
		if !hasProblem(ve.Problems, c.path, "") {
			t.Errorf("%s: got %v, want a problem at %s", c.note, ve.Problems, c.path)
		}
	}
	if got := readFile(t, filepath.Join(dir, ConfigFile)); string(got) != string(before) {
		t.Errorf("rejected edits changed the file:\n%s", got)
	}
	// An edit that fixes nothing and breaks nothing goes through.
	if _, err := s.SetToolLevel("grep", "allow"); err != nil {
		t.Errorf("a valid edit of a file with old problems: %v", err)
	}
}

func TestSentinelErrors(t *testing.T) {
	s, _ := openFixture(t, "config.yaml")
	cases := []struct {
		note string
		want error
		edit func() error
	}{
		{"delete a missing tool", ErrNotFound, func() error { _, err := s.DeleteTool("nope"); return err }},
		{"update a missing rule", ErrNotFound, func() error {
			_, err := s.UpdateRule("nope", policy.DecodeRulePatch(policy.MappingOf(map[string]any{"action": "deny"})))
			return err
		}},
		{"delete a missing rule", ErrNotFound, func() error { _, err := s.DeleteRule("nope"); return err }},
		{"delete a missing override", ErrNotFound, func() error { _, err := s.DeleteApprovalOverride("nope"); return err }},
		{"delete a missing external key", ErrNotFound, func() error { _, err := s.DeleteExternalDirectory("/nope"); return err }},
		{"create a rule with a used id", ErrExists, func() error {
			_, err := s.CreateRule(ruleOf(map[string]any{"id": "rule_001", "tools": []any{"bash"}, "pattern": "ls", "action": "allow"}))
			return err
		}},
		{"rename a rule to a used id", ErrExists, func() error {
			_, err := s.UpdateRule("rule_001", policy.DecodeRulePatch(policy.MappingOf(map[string]any{"id": "cli_rule_bash_ls_*"})))
			return err
		}},
		{"add an override with a used id", ErrExists, func() error {
			_, err := s.AddApprovalOverride(ruleOf(map[string]any{"id": "user_allow_bash_command_git_status", "tools": []any{"bash"}, "match_type": "command", "pattern": "x", "action": "allow"}))
			return err
		}},
		{"replace with a stale etag", ErrPreconditionFailed, func() error {
			_, err := s.IfMatch(`"0000"`).ReplaceSection(policy.WrittenOf(map[string]any{"enabled": true}))
			return err
		}},
	}
	for _, c := range cases {
		if err := c.edit(); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.note, err, c.want)
		}
	}
}

// TestETagDetectsHandEdits: an ETag read before a hand edit is stale after
// it, even before the watcher has reloaded.
func TestETagDetectsHandEdits(t *testing.T) {
	s, dir := openFixture(t, "config.yaml")
	sec, tag, _ := s.Section()
	path := filepath.Join(dir, ConfigFile)
	raw := strings.Replace(string(readFile(t, path)), "write_file: ask", "write_file: deny", 1)
	writeFile(t, path, []byte(raw))
	if _, err := s.IfMatch(tag).ReplaceSection(policy.WrittenOf(sec)); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("got %v, want ErrPreconditionFailed", err)
	}
	if !strings.Contains(string(readFile(t, path)), "write_file: deny") {
		t.Errorf("the hand edit was overwritten")
	}
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	sec, tag, _ = s.Section()
	sec["permission_mode"] = "strict"
	newTag, err := s.IfMatch(`W/"` + tag + `"`).ReplaceSection(policy.WrittenOf(sec))
	if err != nil || newTag == tag {
		t.Fatalf("fresh etag: got %q, %v; want a new etag", newTag, err)
	}
	if _, got, _ := s.Section(); got != newTag {
		t.Errorf("Section etag %q, want %q", got, newTag)
	}
}

// TestWriteErrorLeavesPolicy: a write that fails (read-only dir) wraps the
// OS error and leaves the policy in memory as it was. Root ignores directory
// permissions, so as root (CI) the dir gets a read-only bind mount instead.
func TestWriteErrorLeavesPolicy(t *testing.T) {
	s, dir := openFixture(t, "config.yaml")
	_, tag, _ := s.Section()
	want := os.ErrPermission
	if os.Geteuid() == 0 {
		readOnlyBind(t, dir)
		want = syscall.EROFS
	} else {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o700)
	}
	_, err := s.SetToolLevel("bash", "deny")
	if !errors.Is(err, want) {
		t.Fatalf("got %v, want an error wrapping %v", err, want)
	}
	if _, got, _ := s.Section(); got != tag {
		t.Errorf("the policy in memory changed after a failed write")
	}
}

// readOnlyBind mounts dir read-only over itself until the test ends.
func readOnlyBind(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("mount", "--bind", dir, dir).CombinedOutput(); err != nil {
		t.Fatalf("bind mount %s: %v %s", dir, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	if out, err := exec.Command("mount", "-o", "remount,ro,bind", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v %s", err, out)
	}
}

// TestReloadPicksUpEdits: a hand edit, in place or by rename, is decided on
// within a second; a broken edit keeps the last good policy and is reported.
func TestReloadPicksUpEdits(t *testing.T) {
	s, dir := openFixture(t, "config.yaml")
	changed := make(chan struct{}, 16)
	s.OnChange(func() { changed <- struct{}{} })
	path := filepath.Join(dir, ConfigFile)
	orig := string(readFile(t, path))
	bash := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make"})}

	writeFile(t, path, []byte(strings.Replace(orig, "bash: ask", "bash: deny", 1)))
	waitFor(t, "in-place edit", func() bool { return inForce(s).Evaluate(bash).Level == policy.Deny })

	tmp := filepath.Join(dir, "editor.swp")
	writeFile(t, tmp, []byte(strings.Replace(orig, "bash: ask", "bash: allow", 1)))
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "edit by rename", func() bool { return inForce(s).Evaluate(bash).Level == policy.Allow })
	select {
	case <-changed:
	default:
		t.Errorf("OnChange was not called")
	}

	writeFile(t, path, []byte("permissions: {tools: [\n"))
	waitFor(t, "broken edit reported", func() bool { return hasProblem(s.Problems(), ConfigFile, "") })
	if got := inForce(s).Evaluate(bash).Level; got != policy.Allow {
		t.Errorf("after a broken edit: got %v, want the last good allow", got)
	}

	writeFile(t, filepath.Join(dir, BuiltinFile), []byte("rules:\n  - id: no_make\n    tools: [bash]\n    pattern: make\n    action: deny\n"))
	writeFile(t, path, []byte(orig))
	// The builtin file alone already denies make (the set-aside config keeps
	// its last good policy): wait for the fixed config.yaml too.
	waitFor(t, "user builtin rules and the fixed config", func() bool {
		return inForce(s).Evaluate(bash).Level == policy.Deny && len(s.Problems()) == 0
	})
	if _, src := s.BuiltinRules(); src != filepath.Join(dir, BuiltinFile) {
		t.Errorf("builtin source %q, want the user file", src)
	}
	if len(s.Problems()) != 0 {
		t.Errorf("problems after the fix: %v", s.Problems())
	}
}

func waitFor(t *testing.T, note string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen within a second", note)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEmptiedConfigKeepsLastGoodPolicy: truncating config.yaml to nothing
// keeps the policy in force and reports it, instead of dropping every rule.
func TestEmptiedConfigKeepsLastGoodPolicy(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ConfigFile)
	if err := os.WriteFile(path, []byte("permissions:\n  schema: tiered_policy\n  tools: {bash: deny}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, withEngine(Options{Workspace: dir}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	d := inForce(s).Evaluate(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "ls"})})
	if d.Level != policy.Deny {
		t.Errorf("after emptying config.yaml: got %s, want deny (the last good policy)", d.Level)
	}
	found := false
	for _, p := range s.Problems() {
		found = found || p.Path == ConfigFile && strings.Contains(p.Message, "empty")
	}
	if !found {
		t.Errorf("problems: got %v, want config.yaml is empty", s.Problems())
	}
	if _, err := s.SetToolLevel("read_file", "allow"); !errors.Is(err, ErrBrokenConfig) {
		t.Errorf("an edit of the emptied file: got %v, want ErrBrokenConfig (it would drop the policy)", err)
	}
	if data, _ := os.ReadFile(path); len(data) != 0 {
		t.Errorf("the refused edit wrote %q", data)
	}
}
