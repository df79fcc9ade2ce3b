package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// setupEnv is a home with no agent settings and a known server.
func setupEnv(t *testing.T) (string, func(string) string) {
	home := t.TempDir()
	return home, env(map[string]string{"HOME": home, "TOOLGATE_URL": "http://127.0.0.1:8765", "TOOLGATE_TOKEN": "tg_secret_in_env"})
}

func runSetupArgs(getenv func(string) string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(append([]string{"setup"}, args...), strings.NewReader(""), &out, &errb, getenv)
	return code, out.String(), errb.String()
}

// TestSetupMergesIntoTheAgentsSettings checks that setup keeps everything
// of a settings file but toolgate's older hooks, in its order, keeps a
// backup and the file's mode, and that a second run changes nothing.
func TestSetupMergesIntoTheAgentsSettings(t *testing.T) {
	home, getenv := setupEnv(t)
	path := filepath.Join(home, ".claude", "settings.json")
	old := `{"model":"opus","permissions":{"allow":["Bash(ls:*)"]},
 "hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}],
  "PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"/usr/local/bin/toolgate hook claude-code --wait 5"},{"type":"command","command":"my-linter"}]},
                {"matcher":"*","hooks":[{"type":"http","url":"http://old:1/api/v1/hooks/claude-code"}]}]}}`
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(old), 0o640); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runSetupArgs(getenv, "claude-code", "--bin", "/opt/toolgate")
	if code != exitOK {
		t.Fatalf("setup: exit %d\n%s%s", code, out, errs)
	}
	data, _ := os.ReadFile(path)
	s := string(data)
	for _, want := range []string{`"model": "opus"`, `"Bash(ls:*)"`, `"notify-send done"`, `"my-linter"`, `"matcher": "Bash"`,
		`"onFailure": "block"`, "/api/v1/hooks/claude-code?on_error=deny&wait_seconds=120"} {
		if !strings.Contains(s, want) {
			t.Errorf("the file lost or lacks %s:\n%s", want, s)
		}
	}
	for _, gone := range []string{"--wait 5", "http://old:1", "tg_secret_in_env"} {
		if strings.Contains(s, gone) {
			t.Errorf("the file still holds %s:\n%s", gone, s)
		}
	}
	if strings.Index(s, `"model"`) > strings.Index(s, `"permissions"`) || strings.Index(s, `"permissions"`) > strings.Index(s, `"hooks"`) {
		t.Errorf("the keys changed order:\n%s", s)
	}
	if !strings.Contains(out, "took out 2 older toolgate hook(s)") {
		t.Errorf("setup did not say what it removed: %s", out)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the old 0640", info.Mode().Perm())
	}
	backups, _ := filepath.Glob(path + ".bak-*")
	if len(backups) != 1 {
		t.Fatalf("backups %v, want one", backups)
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != old {
		t.Errorf("the backup is not the old file: %s", b)
	}
	code, out, _ = runSetupArgs(getenv, "claude-code", "--bin", "/opt/toolgate")
	if code != exitOK || !strings.Contains(out, "nothing to change") {
		t.Errorf("a second run: exit %d %q, want nothing to change", code, out)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, data) {
		t.Errorf("a second run changed the file")
	}
}

// TestSetupEachAgentsFile checks where each agent's hooks go and what
// they run: the user's file, or the project's with --project, whose
// workspace is then pinned to the project.
func TestSetupEachAgentsFile(t *testing.T) {
	home, getenv := setupEnv(t)
	proj := t.TempDir()
	cases := []struct {
		note string
		args []string
		file string
		want []string
	}{
		{note: "claude code command hook, user", args: []string{"claude-code", "--command", "--wait", "30"}, file: filepath.Join(home, ".claude", "settings.json"),
			want: []string{`"PreToolUse"`, `"PermissionRequest"`, "/opt/toolgate hook claude-code --url http://127.0.0.1:8765 --wait 30", `"timeout": 45`}},
		{note: "claude code, project: the workspace is the project", args: []string{"claude-code", "--project", proj}, file: filepath.Join(proj, ".claude", "settings.json"),
			want: []string{"workspace=" + strings.ReplaceAll(proj, "/", "%2F")}},
		{note: "gemini, with a token file", args: []string{"gemini", "--token-file", "/etc/tg/token"}, file: filepath.Join(home, ".gemini", "settings.json"),
			want: []string{`"BeforeTool"`, "hook gemini --url http://127.0.0.1:8765 --token-file /etc/tg/token --wait 120", `"timeout": 135000`}},
		{note: "codex, project, dry run writes nothing", args: []string{"codex", "--project", proj, "--dry-run"}, file: "",
			want: []string{"would write " + filepath.Join(proj, ".codex", "hooks.json"), "--workspace " + proj}},
	}
	for _, c := range cases {
		code, out, errs := runSetupArgs(getenv, append(c.args, "--bin", "/opt/toolgate")...)
		if code != exitOK {
			t.Errorf("%s: exit %d\n%s%s", c.note, code, out, errs)
			continue
		}
		text := out
		if c.file != "" {
			data, err := os.ReadFile(c.file)
			if err != nil {
				t.Errorf("%s: %v", c.note, err)
				continue
			}
			var v map[string]any
			if err := json.Unmarshal(data, &v); err != nil {
				t.Errorf("%s: the file is not JSON: %v", c.note, err)
			}
			text = string(data)
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: lacks %s:\n%s", c.note, w, text)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(proj, ".codex")); err == nil {
		t.Errorf("--dry-run wrote %s", filepath.Join(proj, ".codex"))
	}
}

// TestSetupRefusesWhatItCannotRead checks that a file setup cannot read
// exactly is left alone, with the reason.
func TestSetupRefusesWhatItCannotRead(t *testing.T) {
	cases := []struct {
		note    string
		content string
		args    []string
		stderr  string
	}{
		{note: "broken JSON", content: `{"model": "opus",`, stderr: "cannot read it as JSON"},
		{note: "not an object", content: `["hooks"]`, stderr: "not a JSON object"},
		{note: "a key twice", content: `{"hooks": {}, "hooks": {"Stop": []}}`, stderr: `"hooks" appears twice`},
		{note: "hooks not an object", content: `{"hooks": []}`, stderr: "hooks"},
		{note: "an event not a list", content: `{"hooks": {"PreToolUse": {"matcher": "*"}}}`, stderr: "hooks.PreToolUse"},
		{note: "a relative workspace", content: `{}`, args: []string{"--workspace", "proj"}, stderr: "--workspace must be an absolute"},
		{note: "a project that is not a directory", content: `{}`, args: []string{"--project", "/no/such/dir"}, stderr: "is not a directory"},
		{note: "a bad URL", content: `{}`, args: []string{"--url", "ftp://x"}, stderr: "not an http(s) URL"},
	}
	for _, c := range cases {
		home, getenv := setupEnv(t)
		path := filepath.Join(home, ".claude", "settings.json")
		_ = os.MkdirAll(filepath.Dir(path), 0o700)
		if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runSetupArgs(getenv, append([]string{"claude-code"}, c.args...)...)
		after, _ := os.ReadFile(path)
		backups, _ := filepath.Glob(path + ".bak-*")
		if code != exitError || !strings.Contains(errs, c.stderr) || string(after) != c.content || len(backups) != 0 {
			t.Errorf("%s: exit %d stdout %q stderr %q, file changed %v, backups %v; want exit 1 naming %q and nothing changed",
				c.note, code, out, errs, string(after) != c.content, backups, c.stderr)
		}
	}
}

// TestSetupRemove checks that --remove takes out toolgate's hooks only.
func TestSetupRemove(t *testing.T) {
	home, getenv := setupEnv(t)
	if code, out, errs := runSetupArgs(getenv, "gemini", "--bin", "/opt/toolgate"); code != exitOK {
		t.Fatalf("setup: %d %s %s", code, out, errs)
	}
	path := filepath.Join(home, ".gemini", "settings.json")
	data, _ := os.ReadFile(path)
	var v map[string]any
	_ = json.Unmarshal(data, &v)
	v["theme"] = "dark"
	v["hooks"].(map[string]any)["AfterTool"] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "log-it"}}}}
	data, _ = json.Marshal(v)
	_ = os.WriteFile(path, data, 0o600)
	code, out, errs := runSetupArgs(getenv, "gemini", "--remove")
	if code != exitOK || !strings.Contains(out, "took out 1 older toolgate hook(s)") {
		t.Fatalf("remove: %d %s %s", code, out, errs)
	}
	after, _ := os.ReadFile(path)
	if strings.Contains(string(after), "hook gemini") || strings.Contains(string(after), "BeforeTool") ||
		!strings.Contains(string(after), "log-it") || !strings.Contains(string(after), `"theme": "dark"`) {
		t.Errorf("after --remove:\n%s", after)
	}
}

// TestToolgateHookCommandIsRecognised checks which hook commands setup
// and doctor take for toolgate's.
func TestToolgateHookCommandIsRecognised(t *testing.T) {
	cases := []struct {
		note string
		cmd  string
		want bool
	}{
		{note: "plain", cmd: "toolgate hook codex --wait 120", want: true},
		{note: "a path", cmd: "/usr/local/bin/toolgate hook claude-code", want: true},
		{note: "a quoted path with a space", cmd: "'/opt/my tools/tg' hook gemini --url http://x", want: true},
		{note: "another agent word", cmd: "toolgate hook cursor", want: false},
		{note: "hook as an argument later", cmd: "my-linter --then hook codex", want: false},
		{note: "another program", cmd: "notify-send hooked", want: false},
	}
	for _, c := range cases {
		if got := toolgateCommand.MatchString(c.cmd); got != c.want {
			t.Errorf("%s: %q recognised %v, want %v", c.note, c.cmd, got, c.want)
		}
	}
}
