package api

import (
	"errors"
	"testing"
)

func TestParseCommand(t *testing.T) {
	cases := []struct {
		note    string
		text    string
		want    Command
		wantErr string
	}{
		{"6.1 view", "/permissions", Command{Kind: CommandView}, ""},
		{"6.1 view with spaces", "  /permissions   ", Command{Kind: CommandView}, ""},
		{"6.2 ask write_file", "/permissions ask write_file", Command{Kind: CommandToolLevel, Level: "ask", Tool: "write_file"}, ""},
		{"6.2 tool lower-cased", "/permissions allow Bash", Command{Kind: CommandToolLevel, Level: "allow", Tool: "bash"}, ""},
		{"6.3 glob rule", "/permissions allow bash(ls *)", Command{Kind: CommandRule, Level: "allow", Tool: "bash", Pattern: "ls *"}, ""},
		{"6.3 regex rule", "/permissions deny bash(re:.*rm -rf.*)", Command{Kind: CommandRule, Level: "deny", Tool: "bash", Pattern: "re:.*rm -rf.*"}, ""},
		{"6.3 parens inside the pattern", "/permissions ask bash(re:(a|b))", Command{Kind: CommandRule, Level: "ask", Tool: "bash", Pattern: "re:(a|b)"}, ""},
		{"7 add-dir", "/add-dir ~/data", Command{Kind: CommandAddDir, Path: "~/data"}, ""},
		{"6.4 invalid level", "/permissions xxx bash", Command{}, `无效级别 "xxx"，仅允许：allow、ask、deny`},
		{"6.4 empty tool name", "/permissions allow", Command{}, "工具名不能为空。"},
		{"6.4 empty tool name before a pattern", "/permissions allow (ls *)", Command{}, "工具名不能为空。"},
		{"empty pattern", "/permissions allow bash()", Command{}, "规则模式不能为空。 (the pattern is empty)"},
		{"unknown command", "/foo", Command{}, `未知命令 "/foo"：仅支持 /permissions 与 /add-dir (unknown command)`},
		{"two lines", "/permissions\n/permissions", Command{}, "a command is one line"},
	}
	for _, c := range cases {
		got, err := ParseCommand(c.text)
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr || !errors.Is(err, ErrCommand) {
				t.Errorf("%s: ParseCommand(%q) error = %v, want %q", c.note, c.text, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: ParseCommand(%q) = %+v, %v; want %+v", c.note, c.text, got, err, c.want)
		}
	}
}

func TestCLIRuleID(t *testing.T) {
	cases := []struct{ note, tool, pattern, want string }{
		{"6.3 example", "bash", "ls *", "cli_rule_bash_ls_*"},
		{"regex kept as is", "bash", "re:.*rm -rf.*", "cli_rule_bash_re:.*rm_-rf.*"},
		{"backslash kept", "write_file", `re:.*\.env$`, `cli_rule_write_file_re:.*\.env$`},
	}
	for _, c := range cases {
		if got := CLIRuleID(c.tool, c.pattern); got != c.want {
			t.Errorf("%s: CLIRuleID(%q, %q) = %q, want %q", c.note, c.tool, c.pattern, got, c.want)
		}
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/permissions", "/permissions allow bash(ls *)", "/add-dir /tmp", "/permissions deny (", "/permissions ask x()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cmd, err := ParseCommand(text)
		if err != nil {
			if !errors.Is(err, ErrCommand) {
				t.Fatalf("ParseCommand(%q): error %v is not ErrCommand", text, err)
			}
			return
		}
		if cmd.Kind == CommandRule && cmd.Pattern == "" {
			t.Fatalf("ParseCommand(%q): a rule with an empty pattern", text)
		}
		if (cmd.Kind == CommandRule || cmd.Kind == CommandToolLevel) && cmd.Tool == "" {
			t.Fatalf("ParseCommand(%q): an empty tool", text)
		}
	})
}
