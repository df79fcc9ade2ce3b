package importer

import (
	"strings"
	"testing"
	"time"
)

// TestCodexFilesCodexRefuses: a file Codex would not load is not imported
// either, and a file that never ends stops.
func TestCodexFilesCodexRefuses(t *testing.T) {
	for _, c := range []struct{ note, file, err string }{
		{"an unknown decision", `prefix_rule(pattern=["ls"], decision="maybe")`, "not allow, prompt or forbidden"},
		{"an empty pattern", `prefix_rule(pattern=[])`, "pattern cannot be empty"},
		{"empty alternatives", `prefix_rule(pattern=["git", []])`, "alternatives cannot be empty"},
		{"a number in a pattern", `prefix_rule(pattern=["git", 1])`, "string or list of strings"},
		{"a positional argument", `prefix_rule(["ls"])`, "by name"},
		{"an unknown argument", `prefix_rule(pattern=["ls"], when="now")`, "unexpected keyword"},
		{"load", `load("x.star", "y")`, "does not"},
		{"a syntax error", `prefix_rule(pattern=["ls"]`, "does not parse"},
		{"a loop that never ends", "def f():\n  while True:\n    pass\nf()\n", "does not run"},
	} {
		t.Run(c.note, func(t *testing.T) {
			start := time.Now()
			_, err := Codex([]byte(c.file), "x.rules", Options{})
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("error %v, want one saying %q", err, c.err)
			}
			if time.Since(start) > 10*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}
}

// TestCodexStarlark: a rules file is a program; variables and loops work
// as in Codex, and a quoted word is reported.
func TestCodexStarlark(t *testing.T) {
	r, err := Codex([]byte(`
READ_ONLY = ["status", "log", "diff"]
for sub in READ_ONLY:
    prefix_rule(pattern=["git", sub])
prefix_rule(pattern=["echo", "a b"], decision="forbidden")
`), "x.rules", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rules) != 3 || r.Rules[2].Pattern != "git diff *" || len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Reason, `"a b"`) {
		t.Errorf("rules %+v problems %+v", r.Rules, r.Problems)
	}
}

// TestClaudeEntries: the entries the samples do not hold.
func TestClaudeEntries(t *testing.T) {
	for _, c := range []struct {
		note, entry, level string
		tools              map[string]string
		pattern            string // of the one rule, "" for none
		problem            string
	}{
		{note: "Bash(*) is Bash", entry: "Bash(*)", level: Deny, tools: map[string]string{"bash": Deny}},
		{note: "a ? is literal in Claude Code: a regexp", entry: "Bash(ls ?)", level: Allow, pattern: `re:^ls \?$`},
		{note: "a colon inside, not at the end, is literal", entry: "Bash(npm run test:unit)", level: Allow, pattern: "npm run test:unit"},
		{note: "mcp__server__* is the server", entry: "mcp__github__*", level: Deny, pattern: everything},
		{note: "part of a server's tools", entry: "mcp__github__get_*", level: Deny, problem: "not a part of them"},
		{note: "WebFetch of a URL", entry: "WebFetch(https://x.com)", level: Deny, problem: "domain:HOST"},
		{note: "WebSearch takes no specifier", entry: "WebSearch(x)", level: Deny, problem: "specifier"},
		{note: "another tool by its own name", entry: "TodoWrite", level: Deny, tools: map[string]string{"TodoWrite": Deny}},
		{note: "an ask of a tool no rule can name", entry: "Skill", level: Ask, tools: map[string]string{"Skill": Ask}},
		{note: "not an entry", entry: "Bash(ls", level: Allow, problem: "Tool or Tool(specifier)"},
	} {
		t.Run(c.note, func(t *testing.T) {
			r := newResult("claude-code")
			claudeEntryTo(r, c.entry, c.entry, c.level, Options{Project: "/p", Home: "/h"})
			if c.problem != "" {
				if len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Reason, c.problem) {
					t.Errorf("problems %+v, want one saying %q", r.Problems, c.problem)
				}
				return
			}
			if len(r.Problems) > 0 {
				t.Errorf("problems %+v", r.Problems)
			}
			if c.pattern != "" && (len(r.Rules) != 1 || r.Rules[0].Pattern != c.pattern) {
				t.Errorf("rules %+v, want one with pattern %q", r.Rules, c.pattern)
			}
			for tool, lvl := range c.tools {
				if r.Tools[tool] != lvl {
					t.Errorf("tools %v, want %s: %s", r.Tools, tool, lvl)
				}
			}
		})
	}
	r, _ := ClaudeCode([]byte(`{"permissions":{"allow":["Read(src/**)"]}}`), Options{Home: "/h"})
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Reason, "--project") {
		t.Errorf("a relative path without a project: %+v", r.Problems)
	}
	if _, err := ClaudeCode([]byte(`[1]`), Options{}); err == nil {
		t.Error("a file that is not an object was read")
	}
}

func TestClaudeProject(t *testing.T) {
	for _, c := range []struct{ file, home, want string }{
		{"/w/app/.claude/settings.json", "/h", "/w/app"},
		{"/w/app/.claude/settings.local.json", "/h", "/w/app"},
		{"/h/.claude/settings.json", "/h", ""},
		{"/w/app/settings.json", "/h", ""},
	} {
		if got := ClaudeProject(c.file, c.home); got != c.want {
			t.Errorf("ClaudeProject(%q) = %q, want %q", c.file, got, c.want)
		}
	}
}

func TestGeminiErrors(t *testing.T) {
	if _, err := Gemini([]byte("[[rule]\n")); err == nil {
		t.Error("a broken TOML file was read")
	}
	r, err := Gemini([]byte(`
[[rule]]
decision = "allow"
[[rule]]
toolName = "read_file"
commandPrefix = "git"
decision = "allow"
[[rule]]
toolName = "glob"
decision = "maybe"
[[rule]]
toolName = "run_shell_command"
commandPrefix = "git"
commandRegex = "git .*"
decision = "deny"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"names no tool", "run_shell_command only", "not allow, deny or ask_user", "together"}
	if len(r.Problems) != len(want) {
		t.Fatalf("problems %+v", r.Problems)
	}
	for i, w := range want {
		if !strings.Contains(r.Problems[i].Reason, w) {
			t.Errorf("problem %d: %q, want %q", i, r.Problems[i].Reason, w)
		}
	}
}

func TestOpencodeEntries(t *testing.T) {
	r, err := Opencode([]byte(`{"permission": {
		"edit": {"*": "ask", "src/*": "allow", "~/notes/*": "deny", "/etc/*": "deny"},
		"read": {"docs/*": "allow"},
		"websearch": {"*": "ask", "cats": "allow"},
		"glob": {"*": "deny", "/w/*": "allow"},
		"task": "deny",
		"bash": {"ls *": "sometimes"}
	}}`), Options{Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(r.Report())
	var reasons []string
	for _, p := range r.Problems {
		reasons = append(reasons, p.Reason)
	}
	all := strings.Join(reasons, "\n")
	for _, w := range []string{"not allow, ask or deny", "give --project DIR", "search queries", "task permission", "tool-level deny"} {
		if !strings.Contains(all, w) {
			t.Errorf("no problem says %q:\n%s", w, all)
		}
	}
	if len(r.Rules) != 2 || r.Rules[0].Pattern != "/h/notes/*" || r.Rules[1].Pattern != "/etc/*" {
		t.Errorf("rules %+v", r.Rules)
	}
	if _, err := Opencode([]byte(`{"permission": {"a": 1, "a": 2}}`), Options{}); err == nil {
		t.Error("a duplicate key was read")
	}
}
