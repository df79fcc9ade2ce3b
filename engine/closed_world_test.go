package engine_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/fsview"
	"github.com/toolgate/toolgate/policy"
)

// closedWorldCase is one row of testdata/redteam/closed_world.jsonl: an
// attempt, in the shape of a public report or an own finding, to get a
// call allowed that the red-team policy means to ask about or deny.
type closedWorldCase struct {
	ID       string         `json:"id"`
	Class    string         `json:"class"`
	ToolName string         `json:"tool_name"`
	ToolArgs map[string]any `json:"tool_args"`
	// Max is the loosest level the call may get: ask (ask or deny) or deny.
	Max    string `json:"max"`
	Source string `json:"source"`
	Note   string `json:"note"`
}

// closedWorldEngine is the red-team policy on a real workspace: the shell
// and path tools allowed outright, deny rules for git push, checkout --,
// reset --hard and sudo, path deny rules for secrets/ and .git/hooks/ on
// both the path tools and the shell, and the package built-in rules. The
// workspace has a secrets folder, a link into it, a dangling link to a hook
// and a link to .env.
func closedWorldEngine(t *testing.T) (*engine.Engine, string) {
	t.Helper()
	ws := t.TempDir()
	for _, d := range []string{"secrets", "secrets-old", ".git/hooks", "src", "sub"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"secrets/api.key", ".env", "src/main.go", "secrets-old/readme.md", "README.md", "notes.txt", "payload.sh"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"lnk": "secrets", "envlink": ".env", "dangling-hook": ".git/hooks/pre-commit", "keylink": "secrets/api.key"} {
		if err := os.Symlink(filepath.Join(ws, target), filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	deny := func(id, tool, pattern string) map[string]any {
		return map[string]any{"id": id, "tools": []any{tool}, "pattern": pattern, "action": "deny"}
	}
	perms := map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "ask"},
		"tools":    map[string]any{"bash": "allow", "read_file": "allow", "write_file": "allow", "edit_file": "allow"},
		"rules": []any{deny("push", "bash", "git push *"), deny("discard", "bash", "git checkout -- *"),
			deny("reset", "bash", "git reset --hard *"), deny("sudo", "bash", "sudo *"),
			deny("secrets_read", "read_file", "**/secrets/**"), deny("hooks_write", "write_file", "**/.git/hooks/**"),
			deny("secrets_sh", "bash", "**/secrets/**"), deny("hooks_sh", "bash", "**/.git/hooks/**")},
		"external_directory": map[string]any{"*": "allow"}}
	e, problems := engine.Compile(perms, packageBuiltin(t), engine.Options{Workspace: ws, HomeDir: "/home/u",
		ResolvePath: fsview.ResolvePath, KindOf: fsview.KindOf, Glob: fsview.Glob})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return e, ws
}

// TestClosedWorldRedteam: no row of the closed-world red-team table is
// allowed, and every ordinary call of its benign list is, under the same
// policy and workspace. The table's rows cite the public report or page
// their shape comes from.
func TestClosedWorldRedteam(t *testing.T) {
	e, ws := closedWorldEngine(t)
	raw, err := os.ReadFile("testdata/redteam/closed_world.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	perClass := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		var c closedWorldCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		if c.Source == "" || (c.Max != "ask" && c.Max != "deny") {
			t.Fatalf("%s: a row needs a source and max ask or deny", c.ID)
		}
		perClass[c.Class]++
		d := e.Evaluate(&engine.Request{Call: engine.NewCall(c.ToolName, c.ToolArgs), ChannelID: "web", Workspace: ws})
		want := policy.Ask
		if c.Max == "deny" {
			want = policy.Deny
		}
		if d.Level < want {
			t.Errorf("%s [%s, %s] %s %v: %s (%s), want %s or stricter (%s)", c.ID, c.Class, c.Source, c.ToolName, c.ToolArgs, d.Level, d.MatchedRule, c.Max, c.Note)
		}
	}
	t.Logf("red-team rows per class: %v", perClass)
	benign, err := os.ReadFile("testdata/redteam/closed_world_benign.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(benign), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		d := e.Evaluate(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": line}), ChannelID: "web", Workspace: ws})
		if d.Level != policy.Allow {
			t.Errorf("benign %q is %s (%s), want allow", line, d.Level, d.MatchedRule)
		}
	}
	t.Logf("%d benign calls allowed", n)
}
