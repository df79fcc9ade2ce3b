package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/fsview"
	"github.com/toolgate/toolgate/policy"
)

// TestPathRulesSeeEveryForm: user path rules (writes under .git/hooks,
// reads under secrets/) and the built-in secret rules meet a path in every
// form a tool or the shell reaches it by: as written, cleaned (// ./ x/..),
// resolved through a link (a dangling one by its target), under a key the
// contract does not list, inside an option word, and through a filename
// glob expanded against the files that exist. The allowed rows are
// ordinary neighbours.
func TestPathRulesSeeEveryForm(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{"secrets", ".git/hooks", "src", "secrets-old"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"secrets/k", ".env", "src/main.go", "secrets-old/readme.md", "README.md"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"lnk": "secrets", "envlink": ".env", "dangling": ".git/hooks/pre-commit", "srclink": "src"} {
		if err := os.Symlink(filepath.Join(ws, target), filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	rule := func(id, tool, pattern string) map[string]any {
		return map[string]any{"id": id, "tools": []any{tool}, "match_type": "path", "pattern": pattern, "action": "deny"}
	}
	perms := map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "allow"}, "tools": map[string]any{"bash": "allow", "read_file": "allow", "write_file": "allow"},
		"rules": []any{rule("hooks", "write_file", "**/.git/hooks/**"), rule("sec", "read_file", "**/secrets/**"),
			rule("hooks_sh", "bash", "**/.git/hooks/**"), rule("sec_sh", "bash", "**/secrets/**")},
		"external_directory": map[string]any{"*": "allow"}}
	e, problems := engine.Compile(perms, packageBuiltin(t), engine.Options{Workspace: ws, HomeDir: "/home/u",
		ResolvePath: fsview.ResolvePath, KindOf: fsview.KindOf, Glob: fsview.Glob})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	cases := []struct {
		note, tool, key, value string
		want                   policy.Level
	}{
		{"as written", "write_file", "path", ".git/hooks/pre-commit", policy.Deny},
		{"a doubled slash", "write_file", "path", ".git//hooks/pre-commit", policy.Deny},
		{"x/..", "write_file", "path", "x/../.git/hooks/pre-commit", policy.Deny},
		{"a dangling link by its target", "write_file", "path", "dangling", policy.Deny},
		{"an unlisted key", "write_file", "target", ".git/hooks/pre-commit", policy.Deny},
		{"a link under an unlisted key", "write_file", "filepath", "dangling", policy.Deny},
		{"relative", "read_file", "path", "secrets/k", policy.Deny},
		{"through a linked folder", "read_file", "path", "lnk/k", policy.Deny},
		{"a doubled slash, read", "read_file", "path", "secrets//k", policy.Deny},
		{"relativePath through a link", "read_file", "relativePath", "lnk/k", policy.Deny},
		{"shell: relative", "bash", "command", "cat secrets/k", policy.Deny},
		{"shell: through a link", "bash", "command", "cat lnk/k", policy.Deny},
		{"shell: doubled slash", "bash", "command", "cat secrets//k", policy.Deny},
		{"shell: a glob", "bash", "command", "cat secre?s/k", policy.Deny},
		{"shell: a glob of the folder", "bash", "command", "cat secrets/*", policy.Deny},
		{"shell: inside an option word", "bash", "command", "dd if=x of=.git/hooks/pre-commit", policy.Deny},
		{"shell: a dangling link", "bash", "command", "cp x dangling", policy.Deny},
		{"shell: .en? reaches .env", "bash", "command", "cat .en?", policy.Ask},
		{"shell: .[e]nv reaches .env", "bash", "command", "cat .[e]nv", policy.Ask},
		{"shell: a link to .env", "bash", "command", "cat envlink", policy.Ask},
		{"read_file: a link to .env", "read_file", "path", "envlink", policy.Ask},

		{"an ordinary read", "read_file", "path", "src/main.go", policy.Allow},
		{"a neighbour folder", "read_file", "path", "secrets-old/readme.md", policy.Allow},
		{"an ordinary link", "read_file", "path", "srclink/main.go", policy.Allow},
		{"an ordinary write", "write_file", "path", "src/new.go", policy.Allow},
		{"shell: an ordinary glob", "bash", "command", "cat src/*.go", policy.Allow},
		{"shell: a neighbour", "bash", "command", "cat secrets-old/readme.md", policy.Allow},
		{"shell: ls", "bash", "command", "ls -la src", policy.Allow},
		{"shell: an unlisted value that is not a file", "write_file", "encoding", "utf-8", policy.Allow},
	}
	for _, c := range cases {
		args := map[string]any{c.key: c.value}
		if c.tool == "write_file" && c.key != "path" {
			args["path"] = "src/out.txt"
		}
		d := e.Evaluate(&engine.Request{Call: engine.NewCall(c.tool, args), ChannelID: "web", Workspace: ws})
		if d.Level != c.want {
			t.Errorf("%s: %s %s=%q is %s (%s), want %s", c.note, c.tool, c.key, c.value, d.Level, d.MatchedRule, c.want)
		}
	}
}

// TestUnexpandedGlobsMeetRules: when the workspace is not on this host, a
// filename glob in a command cannot be expanded, and a deny or ask glob
// rule applies whenever some path could match both; a glob that cannot
// reach the protected place stays allowed.
func TestUnexpandedGlobsMeetRules(t *testing.T) {
	rule := func(id, pattern string) map[string]any {
		return map[string]any{"id": id, "tools": []any{"bash"}, "pattern": pattern, "action": "deny"}
	}
	perms := map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "allow"}, "tools": map[string]any{"bash": "allow"},
		"rules":              []any{rule("sec", "**/secrets/**"), rule("hooks", "**/.git/hooks/**"), rule("key", "*.pem")},
		"external_directory": map[string]any{"*": "allow"}}
	// A workspace that does not exist here: Glob finds nothing under it.
	e, problems := engine.Compile(perms, nil, engine.Options{Workspace: "/nonexistent/remote/ws", HomeDir: "/home/u",
		ResolvePath: fsview.ResolvePath, KindOf: fsview.KindOf, Glob: fsview.Glob})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	for _, c := range []struct {
		cmd  string
		want policy.Level
	}{
		{"cat secre?s/api.key", policy.Deny},
		{"cat s*/api.key", policy.Deny},
		{"cat [s]ecrets/*", policy.Deny},
		{"cp x .git/hook?/pre-commit", policy.Deny},
		{"cat */*", policy.Deny},
		{"cat src/*.go", policy.Allow},
		{"ls docs/*.md", policy.Allow},
		{"cat s[!e]crets/x", policy.Allow},
	} {
		d := e.Evaluate(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": c.cmd}), ChannelID: "web"})
		if d.Level != c.want {
			t.Errorf("%q is %s (%s), want %s", c.cmd, d.Level, d.MatchedRule, c.want)
		}
	}
}
