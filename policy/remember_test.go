package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestOverrideID(t *testing.T) {
	cases := []struct{ note, tool, matchType, pattern, want string }{
		{"runs of non-alphanumerics become one _", "bash", "command", "git  push --force", "user_allow_bash_command_git_push_force"},
		{"lower-cased", "read_file", "path", "/Home/U/Notes.MD", "user_allow_read_file_path_home_u_notes_md"},
		{"at most 120 characters", "bash", "command", strings.Repeat("a", 200), ("user_allow_bash_command_" + strings.Repeat("a", 200))[:120]},
	}
	for _, c := range cases {
		if got := OverrideID(c.tool, c.matchType, c.pattern); got != c.want {
			t.Errorf("%s: got %q, want %q", c.note, got, c.want)
		}
	}
}

func TestLiteralPattern(t *testing.T) {
	cases := []struct{ note, in, want string }{
		{"plain command stays", "npm run build", "npm run build"},
		{"a glob star is quoted", "cat *", `re:^cat \*$`},
		{"a question mark is quoted", "ls ?", `re:^ls \?$`},
		{"a bracket is quoted", "ls [ab]", `re:^ls \[ab\]$`},
		{"a re: prefix is quoted", "re:.*", `re:^re:\.\*$`},
		{"a plain path stays", "/tmp/a.txt", "/tmp/a.txt"},
	}
	for _, c := range cases {
		if got := LiteralPattern(c.in); got != c.want {
			t.Errorf("%s: got %q, want %q", c.note, got, c.want)
		}
	}
}

func TestAlwaysAllow(t *testing.T) {
	cases := []struct {
		note                     string
		tool, matchType, pattern string
		want                     map[string]any
		err                      error
	}{
		{"a command", "bash", MatchCommand, "npm run build", map[string]any{
			"id": "user_allow_bash_command_npm_run_build", "tools": []any{"bash"}, "match_type": "command",
			"pattern": "npm run build", "action": "allow", "source": "user_approval"}, nil},
		{"a path with a glob character", "read_file", MatchPath, "/tmp/*.log", map[string]any{
			"id": "user_allow_read_file_path_tmp_log", "tools": []any{"read_file"}, "match_type": "path",
			"pattern": `re:^/tmp/\*\.log$`, "action": "allow", "source": "user_approval"}, nil},
		{"nothing to remember", "web_fetch", "", "", nil, ErrNothingToRemember},
		{"no tool", " ", MatchCommand, "ls", nil, ErrNoTool},
	}
	for _, c := range cases {
		o, err := AlwaysAllow(c.tool, c.matchType, c.pattern)
		if !errors.Is(err, c.err) {
			t.Errorf("%s: error %v, want %v", c.note, err, c.err)
			continue
		}
		if err != nil {
			continue
		}
		if got := o.Map(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.note, got, c.want)
		}
	}
	var fe *FieldError
	if _, err := AlwaysAllow("", "", "x"); !errors.As(err, &fe) || fe.Field != "tool_name" {
		t.Errorf("no tool: got %v, want a FieldError naming tool_name", err)
	}
}

func TestSameOverride(t *testing.T) {
	o, _ := AlwaysAllow("bash", MatchCommand, "ls")
	cases := []struct {
		note  string
		other Override
		want  bool
	}{
		{"same id", Override{ID: o.ID}, true},
		{"same tools, match type and pattern", Override{ID: "mine", Tools: []string{"bash"}, MatchType: "command", Pattern: "ls"}, true},
		{"other tool", Override{ID: "mine", Tools: []string{"sh"}, MatchType: "command", Pattern: "ls"}, false},
		{"other pattern", Override{ID: "mine", Tools: []string{"bash"}, MatchType: "command", Pattern: "ls -l"}, false},
	}
	for _, c := range cases {
		if got := SameOverride(&c.other, &o); got != c.want {
			t.Errorf("%s: got %v, want %v", c.note, got, c.want)
		}
	}
}

func TestTrustedDirOverrides(t *testing.T) {
	pair := TrustedDirOverrides("/home/u/my.proj", []string{"read_file"}, []string{"bash"})
	cases := []struct{ note, got, want string }{
		{"path id", pair[0].ID, "cli_trusted_path_"},
		{"shell id", pair[1].ID, "cli_trusted_shell_"},
		{"path pattern quotes the dir", pair[0].Pattern, `re:^/home/u/my\.proj(?:$|/)`},
		{"shell pattern quotes the dir", pair[1].Pattern, `re:.*/home/u/my\.proj.*`},
		{"source", pair[1].Source, SourceCLIAddDir},
	}
	for _, c := range cases {
		if !strings.HasPrefix(c.got, c.want) {
			t.Errorf("%s: got %q, want it to start with %q", c.note, c.got, c.want)
		}
	}
	if pair[0].ID[len("cli_trusted_path_"):] != pair[1].ID[len("cli_trusted_shell_"):] || len(pair[0].ID) != len("cli_trusted_path_")+16 {
		t.Errorf("ids must share one 16-character hash: %q %q", pair[0].ID, pair[1].ID)
	}
}

func TestPathKeys(t *testing.T) {
	for _, k := range PathKeys {
		if !IsPathKey(k) {
			t.Errorf("%s: in PathKeys but IsPathKey is false", k)
		}
	}
	cases := []struct {
		note, k, v string
		want       bool
	}{
		{"path key", "file", "notes", true},
		{"slash", "content", "a/b", true},
		{"backslash", "content", `a\b`, true},
		{"drive", "content", "c:", true},
		{"plain word", "content", "hello", false},
	}
	for _, c := range cases {
		if got := IsPathValue(c.k, c.v); got != c.want {
			t.Errorf("%s: got %v, want %v", c.note, got, c.want)
		}
	}
}
