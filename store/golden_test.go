package store

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files of store/testdata/golden")

// TestGoldenEdits applies every edit operation to hand-written config files
// full of comments and unrelated sections and compares the result byte for
// byte with store/testdata/golden/<name>.yaml.
func TestGoldenEdits(t *testing.T) {
	cases := []struct {
		note, name, fixture string
		edit                func(s *Store) error
	}{
		{"set the level of a listed tool, keeping its comment", "set_tool_level_existing", "config.yaml", func(s *Store) error {
			_, err := s.SetToolLevel("bash", "deny")
			return err
		}},
		{"set the level of a new tool", "set_tool_level_new", "config.yaml", func(s *Store) error {
			_, err := s.SetToolLevel("grep", "allow")
			return err
		}},
		{"set a legacy tool's * and keep its patterns", "set_tool_level_legacy", "legacy.yaml", func(s *Store) error {
			_, err := s.SetToolLevel("bash", "allow")
			return err
		}},
		{"delete a tool", "delete_tool", "config.yaml", func(s *Store) error {
			_, err := s.DeleteTool("write_file")
			return err
		}},
		{"create a rule", "create_rule", "config.yaml", func(s *Store) error {
			_, err := s.CreateRule(ruleOf(map[string]any{"id": "cli_rule_bash_npm_test", "tools": []any{"bash"}, "pattern": "npm test", "action": "allow"}))
			return err
		}},
		{"create a rule in a file with no permissions section", "create_rule_no_section", "nopermissions.yaml", func(s *Store) error {
			_, err := s.CreateRule(ruleOf(map[string]any{"id": "r1", "tools": []any{"bash"}, "pattern": "ls", "action": "allow"}))
			return err
		}},
		{"update a rule: null removes a key", "update_rule", "config.yaml", func(s *Store) error {
			_, err := s.UpdateRule("rule_001", policy.DecodeRulePatch(policy.MappingOf(map[string]any{"action": nil, "severity": "HIGH", "description": "secrets need a look"})))
			return err
		}},
		{"delete a rule", "delete_rule", "config.yaml", func(s *Store) error {
			_, err := s.DeleteRule("cli_rule_bash_ls_*")
			return err
		}},
		{"add an approval override", "add_override", "config.yaml", func(s *Store) error {
			_, err := s.AddApprovalOverride(ruleOf(map[string]any{"id": "o1", "tools": []any{"read_file"}, "match_type": "path", "pattern": "/etc/hosts", "action": "allow", "source": "admin"}))
			return err
		}},
		{"delete an approval override", "delete_override", "config.yaml", func(s *Store) error {
			_, err := s.DeleteApprovalOverride("user_allow_bash_command_git_status")
			return err
		}},
		{"set an external directory", "set_external", "config.yaml", func(s *Store) error {
			_, err := s.SetExternalDirectory("/opt/tools", "allow")
			return err
		}},
		{"set an external directory where it is a plain level", "set_external_legacy", "legacy.yaml", func(s *Store) error {
			_, err := s.SetExternalDirectory("/srv", "deny")
			return err
		}},
		{"delete an external directory", "delete_external", "config.yaml", func(s *Store) error {
			_, err := s.DeleteExternalDirectory("/data/shared")
			return err
		}},
		{"set settings", "set_settings", "config.yaml", func(s *Store) error {
			_, err := s.SetSettings(policy.DecodeSettingsPatch(policy.MappingOf(map[string]any{"permission_mode": "strict", "enabled": false, "deny_guidance_message": "Ask an admin."})))
			return err
		}},
		{"set owner scopes", "set_owner_scopes", "config.yaml", func(s *Store) error {
			_, err := s.SetOwnerScopes(scopesOf(t, map[string]any{"feishu": map[string]any{"ou_123": map[string]any{
				"tools":    map[string]any{"bash": map[string]any{"patterns": map[string]any{"git *": "allow"}, "*": "deny"}},
				"defaults": map[string]any{"*": "ask"}}}}))
			return err
		}},
		{"replace the section; unchanged entries keep comments", "replace_section", "config.yaml", func(s *Store) error {
			sec, tag, err := s.Section()
			if err != nil {
				return err
			}
			sec["tools"] = map[string]any{"read_file": "allow", "bash": "deny"}
			delete(sec, "approval_overrides")
			sec["deny_guidance_message"] = "no"
			_, err = s.IfMatch(tag).ReplaceSection(policy.WrittenOf(sec))
			return err
		}},
		{"always allow a shell command (the override staged in a transaction)", "always_allow", "config.yaml", func(s *Store) error {
			o, err := engine.AlwaysAllowOverride(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": " npm run build "})})
			if err != nil {
				return err
			}
			_, err = s.Update(context.Background(), func(tx *Tx) error {
				_, err := tx.AddApprovalOverride(o)
				return err
			})
			return err
		}},
		{"add-dir on a tiered policy", "add_dir_tiered", "config.yaml", func(s *Store) error {
			_, err := s.AddTrustedDirectory("~/projects/app/", testDirTools)
			return err
		}},
		{"add-dir on a legacy policy sets only external_directory", "add_dir_legacy", "legacy.yaml", func(s *Store) error {
			_, err := s.AddTrustedDirectory(`/srv/data\x`, testDirTools)
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, dir := openFixture(t, c.fixture)
			if err := c.edit(s); err != nil {
				t.Fatalf("%s: %v", c.note, err)
			}
			got := readFile(t, filepath.Join(dir, ConfigFile))
			golden := filepath.Join("testdata", "golden", c.name+".yaml")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%s: %v (run go test ./store -run TestGoldenEdits -update)", c.note, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: got\n%s\nwant\n%s", c.note, got, want)
			}
		})
	}
}

// TestEditEdgeLayouts: files whose layout is unusual keep what they can.
func TestEditEdgeLayouts(t *testing.T) {
	cases := []struct{ note, src, want string }{
		{"permissions first, head comments kept once",
			"# head\n\n# perms head\npermissions:\n  tools:\n    bash: ask\nother: 1\n",
			"# head\n\n# perms head\npermissions:\n  tools:\n    bash: ask\n    grep: allow\nother: 1\n"},
		{"a flow-style section stays flow style; the file gets a final newline",
			"permissions: {tools: {bash: ask}}\n# c\nother: 1",
			"permissions: {tools: {bash: ask, grep: allow}}\n# c\nother: 1\n"},
		{"an empty section is filled", "permissions:\n", "permissions:\n  tools:\n    grep: allow\n"},
		{"a comment-only file keeps its comment", "# only a comment\n", "# only a comment\n\npermissions:\n  tools:\n    grep: allow\n"},
		{"an indentation of four is kept", "a: 1\npermissions:\n    tools:\n        bash: ask\n", "a: 1\npermissions:\n    tools:\n        bash: ask\n        grep: allow\n"},
		// yaml.v3 counts a lone CR (and NEL, LS, PS) as a line break; the
		// splice must count lines the same way (a fuzzer found the panic).
		{"lone CR line breaks", "permissions:\r  tools:\r    bash: ask\rother: 1\r", "permissions:\r  tools:\r    bash: ask\r    grep: allow\rother: 1\r"},
		{"CR LF line breaks", "a: 1\r\npermissions:\r\n  tools: {}\r\nb: 2\r\n", "a: 1\r\npermissions:\r\n  tools: {grep: allow}\r\nb: 2\r\n"},
		{"an empty section before a key after a lone CR", "permissions:\r\rs: 1", "permissions:\r  tools:\r    grep: allow\r\rs: 1\n"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, ConfigFile), []byte(c.src))
		s, err := Open(dir, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetToolLevel("grep", "allow"); err != nil {
			t.Errorf("%s: %v", c.note, err)
		}
		s.Close()
		if got := string(readFile(t, filepath.Join(dir, ConfigFile))); got != c.want {
			t.Errorf("%s: got\n%q\nwant\n%q", c.note, got, c.want)
		}
	}
}
