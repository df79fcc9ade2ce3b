package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// diskPermissions decodes the permissions section of config.yaml on disk.
func diskPermissions(t *testing.T, s *Server) map[string]any {
	t.Helper()
	var doc struct {
		Permissions map[string]any `yaml:"permissions"`
	}
	if err := yaml.Unmarshal([]byte(s.ReadFile("config.yaml")), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Permissions
}

type commandResp struct {
	OK      bool     `json:"ok"`
	Output  string   `json:"output"`
	Methods []string `json:"methods"`
}

// TestAPICommandsSpecExamples runs each example of docs/agents.md#editing-the-policy-over-the-api, 6.3 and 7
// through POST /api/v1/commands and compares config.yaml on disk.
func TestAPICommandsSpecExamples(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	run := func(text string) commandResp {
		t.Helper()
		st, _, body := s.Call(s.Token, "POST", "/api/v1/commands", map[string]any{"text": text}, nil)
		if st != 200 {
			t.Fatalf("%s: %d %s", text, st, body)
		}
		return DecodeJSON[commandResp](t, body)
	}
	for _, c := range []struct{ text, tool, level string }{
		{"/permissions ask write_file", "write_file", "ask"},
		{"/permissions allow bash", "bash", "allow"},
		{"/permissions deny BASH", "bash", "deny"},
	} {
		got := run(c.text)
		if !reflect.DeepEqual(got.Methods, []string{"permissions.tools.update"}) {
			t.Errorf("%s: methods %v", c.text, got.Methods)
		}
		if lvl := diskPermissions(t, s)["tools"].(map[string]any)[c.tool]; lvl != c.level {
			t.Errorf("%s: tools.%s = %v on disk, want %s", c.text, c.tool, lvl, c.level)
		}
	}
	run("/permissions ask bash")

	examples := []struct{ text, id, tool, pattern, action string }{
		{"/permissions allow bash(ls *)", "cli_rule_bash_ls_*", "bash", "ls *", "allow"},
		{"/permissions deny bash(re:.*rm -rf.*)", "cli_rule_bash_re:.*rm_-rf.*", "bash", "re:.*rm -rf.*", "deny"},
		{`/permissions ask write_file(re:.*\.env$)`, `cli_rule_write_file_re:.*\.env$`, "write_file", `re:.*\.env$`, "ask"},
	}
	for _, e := range examples {
		got := run(e.text)
		if !reflect.DeepEqual(got.Methods, []string{"permissions.rules.create"}) {
			t.Errorf("%s: methods %v", e.text, got.Methods)
		}
	}
	var want []any
	for _, e := range examples {
		want = append(want, map[string]any{"id": e.id, "tools": []any{e.tool}, "pattern": e.pattern, "action": e.action})
	}
	if got := diskPermissions(t, s)["rules"]; !reflect.DeepEqual(got, want) {
		t.Errorf("rules on disk = %#v\nwant %#v", got, want)
	}

	// The same rule again with another level falls back to an update.
	got := run("/permissions deny bash(ls *)")
	if !reflect.DeepEqual(got.Methods, []string{"permissions.rules.create", "permissions.rules.update"}) {
		t.Errorf("collision: methods %v", got.Methods)
	}
	rules := diskPermissions(t, s)["rules"].([]any)
	if len(rules) != 3 || rules[0].(map[string]any)["action"] != "deny" {
		t.Errorf("after the collision rules = %#v", rules)
	}

	// Viewing prints the two sections of docs/agents.md#editing-the-policy-over-the-api.
	view := run("/permissions")
	if !reflect.DeepEqual(view.Methods, []string{"permissions.tools.get", "permissions.rules.get"}) {
		t.Errorf("view methods %v", view.Methods)
	}
	for _, line := range []string{"── Tool Permissions ──", "── Rules ──", "  [cli_rule_bash_ls_*]  bash  pattern: ls *  action: deny"} {
		if !strings.Contains(view.Output, line+"\n") {
			t.Errorf("view lacks %q:\n%s", line, view.Output)
		}
	}
	if !strings.Contains(view.Output, "  bash             →  ask\n") {
		t.Errorf("view tool line not aligned:\n%s", view.Output)
	}

	// docs/decisions.md#approval-overrides-always-allow-and-add-dir: /add-dir writes external_directory and the two overrides.
	dir := filepath.ToSlash(filepath.Join(s.Workspace, "..", "shared-data"))
	dir = filepath.ToSlash(filepath.Clean(dir))
	got = run("/add-dir " + dir)
	if !reflect.DeepEqual(got.Methods, []string{"command.add_dir"}) {
		t.Errorf("add-dir methods %v", got.Methods)
	}
	perms := diskPermissions(t, s)
	if ext := perms["external_directory"].(map[string]any); ext[dir] != "allow" || ext["*"] != "ask" {
		t.Errorf("external_directory = %v", ext)
	}
	sum := sha256.Sum256([]byte(dir))
	hash := hex.EncodeToString(sum[:])[:16]
	ids := map[string]map[string]any{}
	for _, o := range perms["approval_overrides"].([]any) {
		m := o.(map[string]any)
		ids[m["id"].(string)] = m
	}
	for _, id := range []string{"cli_trusted_path_" + hash, "cli_trusted_shell_" + hash} {
		if o := ids[id]; o == nil || o["action"] != "allow" || o["source"] != "cli_add_dir" {
			t.Errorf("override %s = %v (all: %v)", id, o, ids)
		}
	}
}

// TestAPICommandErrors checks the messages docs/configuration.md#validation gives.
func TestAPICommandErrors(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	before := s.ReadFile("config.yaml")
	for _, c := range []struct{ text, want string }{
		{"/permissions xxx bash", `无效级别 "xxx"，仅允许：allow、ask、deny`},
		{"/permissions allow", "工具名不能为空。"},
		{"/permissions allow bash(re:(x)", "permissions.rules.create failed"},
	} {
		st, _, body := s.Call(s.Token, "POST", "/api/v1/commands", map[string]any{"text": c.text}, nil)
		var e apiError
		_ = DecodeJSON[map[string]any](t, body)
		e = DecodeJSON[apiError](t, body)
		if st != 400 || !strings.Contains(e.Error.Message, c.want) {
			t.Errorf("%s: %d %s, want 400 with %q", c.text, st, body, c.want)
		}
	}
	if s.ReadFile("config.yaml") != before {
		t.Errorf("a failed command changed config.yaml")
	}
}
