package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportExitCodes runs `toolgate import` on the importer's sample
// files without a server: what is printed where, and the exit codes
// docs/import.md lists. Writing to a real server is
// integration/import_test.go's.
func TestImportExitCodes(t *testing.T) {
	td := "../../importer/testdata/"
	dead := filepath.Join(t.TempDir(), "opencode.json")
	if err := os.WriteFile(dead, []byte(`{"permission": {"bash": {"git *": "allow", "*": "ask"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		note   string
		args   []string
		code   int
		stdout string // a part of stdout, "" for none
		stderr string
	}{
		{note: "all carried over", args: []string{"claude-code", td + "claude-permissions-docs.json"},
			code: exitOK, stdout: "pattern: git push *"},
		{note: "some not carried over", args: []string{"codex", td + "codex-docs.rules"},
			code: exitPartial, stdout: "pattern: gh pr view *", stderr: "not carried over: host_executable"},
		{note: "stricter in toolgate", args: []string{"gemini", td + "gemini-priority.toml"},
			code: exitPartial, stderr: "stricter in toolgate:"},
		{note: "an agent's own block is not carried", args: []string{"opencode", td + "opencode-docs-global.json", "--project", "/p"},
			code: exitPartial, stdout: "'*': ask", stderr: "applies to the build agent only"},
		{note: "an entry that never decides is left out, and the import is complete", args: []string{"opencode", dead, "--project", "/p"},
			code: exitOK, stdout: "bash: ask", stderr: "left out (never decides in opencode)"},
		{note: "an unknown agent", args: []string{"cursor", td + "codex-docs.rules"}, code: exitError, stderr: "unknown agent"},
		{note: "no file", args: []string{"codex"}, code: exitError, stderr: "usage"},
		{note: "a missing file", args: []string{"codex", td + "nothing.rules"}, code: exitError, stderr: "no such file"},
		{note: "a file of another agent", args: []string{"gemini", td + "claude-settings-docs.json"}, code: exitError, stderr: "not a Gemini CLI policy file"},
		{note: "--write with no server: printed, then the write fails", args: []string{"claude-code", td + "claude-permissions-docs.json", "--write", "--url", "http://127.0.0.1:1"},
			code: exitError, stdout: "permissions:", stderr: "cannot reach toolgate"},
	} {
		t.Run(c.note, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append([]string{"import"}, c.args...), nil, &out, &errb, env(map[string]string{"TOOLGATE_TOKEN": "t"}))
			if code != c.code || !strings.Contains(out.String(), c.stdout) || !strings.Contains(errb.String(), c.stderr) {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out.String(), errb.String())
			}
			if c.code == exitError && c.stdout == "" && out.Len() > 0 {
				t.Errorf("printed on stdout although it failed:\n%s", out.String())
			}
		})
	}
}
