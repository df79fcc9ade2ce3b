package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolgateTest: toolgate test compiles a config dir's policy with no
// server, reports each rule example that does not hold and each call of a
// decisions file decided otherwise, and exits 1 on any; 0 when all hold.
func TestToolgateTest(t *testing.T) {
	const policyYAML = `permissions:
  schema: tiered_policy
  tools: {bash: ask, read_file: allow}
  rules:
    - id: no_push
      tools: [bash]
      pattern: "git push *"
      action: deny
      examples:
        match: ["git push origin main", "git -C repo push"]
        no_match: ["git pull"]
    - id: status
      tools: [bash]
      pattern: "git status *"
      action: allow
`
	const cases = `{"tool_name": "bash", "tool_args": {"command": "git push origin main"}, "want": "deny"}
# a comment, then a blank line

{"tool_name": "bash", "tool_args": {"command": "git status --short"}, "want": "allow", "matched_rule": "tiered_policy:rules:rules[status]"}
{"tool_name": "bash", "tool_args": {"command": "git status; rm -rf ~"}, "want": "ASK", "note": "the second command: no allow"}
`
	write := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	good := write(t, map[string]string{"config.yaml": policyYAML, "builtin_rules.yaml": "rules: []\n", "ok.jsonl": cases})
	broken := write(t, map[string]string{"config.yaml": strings.Replace(policyYAML, `no_match: ["git pull"]`, `no_match: ["git pull", "git push"]`, 1),
		"builtin_rules.yaml": "rules: []\n"})
	missed := write(t, map[string]string{"miss.jsonl": `{"tool_name": "bash", "tool_args": {"command": "git push -f"}, "want": "allow"}` + "\n",
		"bad.jsonl": `{"tool_name": "bash", "want": "maybe"}` + "\n", "typo.jsonl": `{"tool_nme": "bash", "want": "ask"}` + "\n"})
	for _, c := range []struct {
		note string
		args []string
		code int
		out  []string
	}{
		{"the examples and every call hold", []string{"--config-dir", good, filepath.Join(good, "ok.jsonl")}, exitOK,
			[]string{"3 rule examples, 0 problems; 3 calls, 0 missed"}},
		{"examples alone", []string{"--config-dir", good}, exitOK, []string{"3 rule examples, 0 problems; 0 calls, 0 missed"}},
		{"an example that does not hold", []string{"--config-dir", broken}, exitError,
			[]string{`problem: permissions.rules[0].examples.no_match[1]: rule "no_push" matches "git push", listed under no_match`, "1 problems"}},
		{"a call decided otherwise", []string{"--config-dir", good, filepath.Join(missed, "miss.jsonl")}, exitError,
			[]string{"miss: " + filepath.Join(missed, "miss.jsonl") + `:1: bash {"command":"git push -f"}: got deny (tiered_policy:rules:deny:rules[no_push]), want allow`, "1 calls, 1 missed"}},
		{"a want that is not a level", []string{"--config-dir", good, filepath.Join(missed, "bad.jsonl")}, exitError, nil},
		{"a misspelt key", []string{"--config-dir", good, filepath.Join(missed, "typo.jsonl")}, exitError, nil},
		{"a config dir that is not there", []string{"--config-dir", filepath.Join(good, "nope")}, exitError, nil},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"test"}, c.args...), strings.NewReader(""), &out, &errb, func(string) string { return "" })
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", c.note, code, c.code, out.String(), errb.String())
		}
		for _, want := range c.out {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: stdout lacks %q:\n%s", c.note, want, out.String())
			}
		}
	}
}

// TestToolgateTestFilesystem: by default toolgate test looks at no file, so
// a read through a workspace link that leads out of it is decided as the
// path is written (allowed); with --filesystem it is resolved as the
// server resolves it and asked about, as the server does.
func TestToolgateTestFilesystem(t *testing.T) {
	cfg, ws, outside := t.TempDir(), t.TempDir(), t.TempDir()
	for name, text := range map[string]string{
		"config.yaml":        "permissions:\n  schema: tiered_policy\n  tools: {read_file: allow}\n",
		"builtin_rules.yaml": "rules: []\n",
		"link.jsonl":         `{"tool_name": "read_file", "tool_args": {"path": "out/secret.txt"}, "want": "ask"}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(cfg, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		note  string
		flags []string
		code  int
		out   string
	}{
		{"as written", nil, exitError, "got allow (tools.read_file), want ask"},
		{"as the server resolves it", []string{"--filesystem"}, exitOK, "1 calls, 0 missed"},
	} {
		args := append([]string{"test", "--config-dir", cfg, "--workspace", ws}, c.flags...)
		var out, errb bytes.Buffer
		code := run(append(args, filepath.Join(cfg, "link.jsonl")), strings.NewReader(""), &out, &errb, func(string) string { return "" })
		if code != c.code || !strings.Contains(out.String(), c.out) {
			t.Errorf("%s: exit %d, want %d; stdout lacks %q?\nstdout: %s\nstderr: %s", c.note, code, c.code, c.out, out.String(), errb.String())
		}
	}
}
