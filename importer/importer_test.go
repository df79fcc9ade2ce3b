package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/engine"
)

// The samples are decided in this workspace and home.
const (
	workspace = "/home/dev/project"
	home      = "/home/dev"
)

var sampleOpts = Options{Project: workspace, Home: home}

// call is one tool call and the level the source gives it.
type call struct {
	tool string
	args map[string]any
	want string
}

func sh(cmd, want string) call       { return call{"bash", map[string]any{"command": cmd}, want} }
func file(tool, p, want string) call { return call{tool, map[string]any{"file_path": p}, want} }

// sample is a real-world file, what converting it must give, and calls
// the converted policy must decide as the source does.
type sample struct {
	note     string
	convert  func([]byte) (*Result, error)
	file     string
	rules    int
	tools    map[string]string
	problems []string // a part of each problem's entry, in order
	stricter int      // how many of them were carried over, stricter
	dropped  int
	yaml     []string // parts the printed YAML must hold
	calls    []call
}

// compile builds a real engine from the section the import would write,
// under a policy that otherwise asks (defaults "*": ask), with no built-in
// rules and every directory trusted, so that only the imported entries
// decide.
func compile(t *testing.T, r *Result) *engine.Engine {
	t.Helper()
	text, err := r.YAML()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]any
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	perms := doc["permissions"]
	if perms == nil {
		perms = map[string]any{}
	}
	perms["schema"] = "tiered_policy"
	perms["external_directory"] = map[string]any{"*": "allow"}
	if perms["defaults"] == nil {
		perms["defaults"] = map[string]any{"*": "ask"}
	}
	e, problems := engine.Compile(perms, []any{}, engine.Options{HomeDir: home})
	if len(problems) > 0 {
		t.Fatalf("the imported section has problems: %v\n%s", problems, text)
	}
	return e
}

func runSample(t *testing.T, s sample) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", s.file))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.convert(data)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := r.YAML()
	t.Logf("%s\n%s", text, r.Report())
	if len(r.Rules) != s.rules {
		t.Errorf("%d rules, want %d", len(r.Rules), s.rules)
	}
	for tool, lvl := range s.tools {
		if r.Tools[tool] != lvl {
			t.Errorf("tools.%s = %q, want %q", tool, r.Tools[tool], lvl)
		}
	}
	if len(r.Tools) != len(s.tools) {
		t.Errorf("tools %v, want %v", r.Tools, s.tools)
	}
	if len(r.Problems) != len(s.problems) {
		t.Errorf("%d problems, want %d", len(r.Problems), len(s.problems))
	}
	stricter := 0
	for i, p := range r.Problems {
		if i < len(s.problems) && !strings.Contains(p.Entry, s.problems[i]) {
			t.Errorf("problem %d is %q, want one about %q", i, p.Entry, s.problems[i])
		}
		if p.Stricter {
			stricter++
		}
	}
	if stricter != s.stricter || len(r.Dropped) != s.dropped {
		t.Errorf("%d stricter, %d dropped; want %d, %d", stricter, len(r.Dropped), s.stricter, s.dropped)
	}
	for _, part := range s.yaml {
		if !strings.Contains(text, part) {
			t.Errorf("the YAML lacks %q", part)
		}
	}
	e := compile(t, r) // the engine checks the rules' examples too
	for _, c := range s.calls {
		d := e.Evaluate(&engine.Request{Call: engine.NewCall(c.tool, c.args), ChannelID: "cli", Workspace: workspace})
		if d.Level.String() != c.want {
			t.Errorf("%s %v: %s (%s), the source gives %s", c.tool, c.args, d.Level, d.MatchedRule, c.want)
		}
	}
}

func TestClaudeCodeSamples(t *testing.T) {
	claude := func(data []byte) (*Result, error) { return ClaudeCode(data, sampleOpts) }
	for _, s := range []sample{
		{note: "the settings page's example: legacy prefix rules, exact commands, dotfiles and a secrets folder",
			convert: claude, file: "claude-settings-docs.json", rules: 7,
			calls: []call{
				sh("npm run lint", "allow"),
				sh("npm run lint --fix", "ask"), // exact: nothing more
				sh("npm run test", "allow"),
				sh("npm run test -- --watch", "allow"),
				sh("npm run testing", "ask"), // test:* is "test *": a word boundary
				sh("curl https://example.com", "deny"),
				sh("cd /tmp && curl -s x", "deny"),
				file("read_file", home+"/.zshrc", "allow"),
				file("read_file", home+"/.zshrc.bak", "ask"),
				file("read_file", workspace+"/.env", "deny"),
				file("read_file", workspace+"/.env.local", "deny"),
				file("grep", workspace+"/.env", "deny"), // Read rules reach the searches
				file("read_file", workspace+"/secrets/db/key", "deny"),
				file("read_file", workspace+"/src/.env.example", "ask"), // ./ anchors at the project
				file("read_file", workspace+"/README.md", "ask"),
			}},
		{note: "the permissions page's wildcard example: * anywhere; the git push deny beats the git * main allow",
			convert: claude, file: "claude-permissions-docs.json", rules: 6,
			calls: []call{
				sh("npm run build", "allow"),
				sh("git commit -m x", "allow"),
				sh("git checkout main", "allow"),
				sh("git push origin main", "deny"), // deny before allow, as Claude Code
				sh("node --version", "allow"),
				sh("node --version; rm -rf /tmp/x", "ask"), // an allow never covers a second command
				sh("go help build --help x", "allow"),
				sh("git push", "deny"),
				sh("npm install", "ask"),
			}},
		{note: "every specifier form of the permissions page: paths by root, home, project and cwd; domains; MCP servers and tools; bare ask beats every allow",
			convert: claude, file: "claude-permissions-forms.json", rules: 11,
			tools:    map[string]string{"mcp_free_search": "allow"},
			problems: []string{"additionalDirectories", "defaultMode", "Agent(Explore)"},
			calls: []call{
				file("edit_file", workspace+"/docs/a/b.md", "allow"),
				file("write_file", workspace+"/docs/new.md", "allow"), // Edit rules cover Write
				file("edit_file", "/docs/a.md", "ask"),                // /docs is the project's, not the root's
				file("edit_file", "/tmp/scratch.txt", "allow"),
				file("edit_file", "/tmp/scratch.txt2", "ask"),
				file("read_file", workspace+"/src/main.go", "allow"),
				file("read_file", "/Users/alice/secrets/k", "deny"),
				file("edit_file", workspace+"/src/a/b.ts", "deny"),
				file("edit_file", workspace+"/src/a/b.go", "ask"),
				{"mcp_fetch_webpage", map[string]any{"url": "https://example.com/docs?q=1", "prompt": "sum, up"}, "allow"},
				{"mcp_fetch_webpage", map[string]any{"url": "https://example.com.evil.net/", "prompt": "x"}, "ask"},
				{"mcp_fetch_webpage", map[string]any{"url": "https://evil.net/", "prompt": `"url":"https://example.com/"`}, "ask"},
				{"mcp__puppeteer__screenshot", map[string]any{"name": "x"}, "allow"},
				{"mcp__puppeteer__puppeteer_navigate", map[string]any{"url": "https://x"}, "ask"}, // ask beats the server's allow
				{"mcp_free_search", map[string]any{"query": "x"}, "allow"},
				sh("git push origin main", "ask"),
				sh("ls", "ask"), // bare Bash in ask: every command asks
			}},
	} {
		t.Run(s.note, func(t *testing.T) { runSample(t, s) })
	}
}

func TestCodexSamples(t *testing.T) {
	codex := func(name string) func([]byte) (*Result, error) {
		return func(data []byte) (*Result, error) { return Codex(data, name, sampleOpts) }
	}
	for _, s := range []sample{
		{note: "openai/codex's example policy: forbidden, prompt and allow prefixes with their examples",
			convert: codex("codex-example.rules"), file: "codex-example.rules", rules: 8,
			yaml: []string{"examples:\n        match:\n          - git reset --hard\n        no_match:\n          - git reset --keep\n          - git reset --merge\n",
				"- ls -a .\n", "- cp -r src dest\n", "- hea -n 1,5p CHANGELOG.md\n"},
			calls: []call{
				sh("git reset --hard", "deny"),
				sh("git reset --hard HEAD~1", "deny"),
				sh("git reset --keep", "ask"),
				sh("ls -a .", "allow"),
				sh("lsof", "ask"),
				sh("cp -r src dest", "ask"),
				sh("head -n 5 CHANGELOG.md", "allow"),
				sh("printenv PATH", "allow"),
				sh("which -a python3", "allow"),
			}},
		{note: "the docs' rules: a justification, string examples, alternatives; host_executable is reported",
			convert: codex("codex-docs.rules"), file: "codex-docs.rules", rules: 3,
			// The ask rule's * reaches the commas of the first example only
			// in its strict reading, which the check of examples counts.
			problems: []string{"host_executable"},
			yaml: []string{"match:\n          - gh pr view 7888\n          - gh pr view --repo openai/codex\n          - gh pr view 7888 --json title,body,comments\n        no_match:\n          - gh pr --repo openai/codex view 7888\n",
				"match:\n          - git push origin main\n        no_match:\n          - git status\n"},
			calls: []call{
				sh("gh pr view 7888 --json title,body,comments", "ask"),
				sh("gh pr --repo openai/codex view 7888", "ask"), // no rule: the default
				sh("git push origin main", "ask"),
				sh("git fetch", "ask"),
				sh("git status", "ask"),
			}},
	} {
		t.Run(s.note, func(t *testing.T) { runSample(t, s) })
	}
}

func TestGeminiSamples(t *testing.T) {
	for _, s := range []sample{
		{note: "the policy engine page's examples: a denied prefix, an asked prefix, a tool list",
			convert: Gemini, file: "gemini-docs.toml", rules: 3,
			calls: []call{
				sh("rm -rf /tmp/x", "deny"),
				sh("rm -rfv x", "ask"), // "rm -rf" then a space or the end
				sh("git status", "ask"),
				file("write_file", workspace+"/a", "ask"),
				file("edit_file", workspace+"/a", "ask"),
			}},
		{note: "Gemini CLI's own write.toml: mode-only rules and safety checkers are reported, the rest asks",
			convert: Gemini, file: "gemini-write.toml", rules: 4,
			tools:    map[string]string{"save_memory": "ask", "activate_skill": "ask"},
			problems: []string{"decision=allow priority=15", "decision=allow priority=15", "decision=allow priority=100"},
			calls: []call{
				file("edit_file", workspace+"/a", "ask"),
				sh("ls", "ask"),
			}},
		{note: "a user's policy: a command regexp, tool lists and prefixes, all allow in falling priority",
			convert: Gemini, file: "gemini-pickle-rick.toml", rules: 14,
			tools: map[string]string{"read_file": "allow", "write_file": "allow", "edit_file": "allow", "glob": "allow",
				"list_dir": "allow", "grep": "allow", "create_or_update_file": "allow", "delete_file": "allow", "delegate_to_agent": "allow"},
			calls: []call{
				sh("python3 spawn_morty.py --task x", "allow"),
				sh("git status", "allow"),
				sh("github-cli x", "ask"),
				sh("rm -r build", "allow"),
				sh("curl x", "ask"),
				file("read_file", workspace+"/a.go", "allow"),
			}},
	} {
		t.Run(s.note, func(t *testing.T) { runSample(t, s) })
	}
}

func TestOpencodeSamples(t *testing.T) {
	oc := func(data []byte) (*Result, error) { return Opencode(data, sampleOpts) }
	for _, s := range []sample{
		{note: "the docs' granular example: a fallback ask with later exceptions; an allow after a fallback deny cannot be carried",
			convert: oc, file: "opencode-docs-granular.json", rules: 4,
			tools:    map[string]string{"bash": "ask", "edit_file": "deny", "write_file": "deny"},
			problems: []string{"packages/web/src/content/docs/*.mdx"},
			calls: []call{
				sh("git status", "allow"),
				sh("npm test", "allow"),
				sh("rm -rf build", "deny"),
				sh("make", "ask"),
				file("edit_file", workspace+"/packages/web/src/content/docs/a.mdx", "deny"), // stricter than opencode
			}},
		{note: "the docs' global example: * is the default, a tool's level beats it; an agent's block is reported",
			convert: oc, file: "opencode-docs-global.json", rules: 0,
			tools:    map[string]string{"bash": "allow", "edit_file": "deny", "write_file": "deny"},
			problems: []string{`agent.build.permission.bash["*"]`, `agent.build.permission.bash["git status *"]`},
			calls: []call{
				sh("make", "allow"),
				file("edit_file", workspace+"/a", "deny"),
				file("read_file", workspace+"/a", "ask"),
			}},
		{note: "order: an entry a later * covers is left out; an allow after an overlapping deny is refused",
			convert: oc, file: "opencode-order.jsonc", rules: 3,
			tools:    map[string]string{"bash": "allow", "mcp_fetch_webpage": "ask"},
			problems: []string{`"git status *"`},
			dropped:  1,
			calls: []call{
				sh("git push origin", "deny"), // the git push ask is dead: * then git * follow it
				sh("git status", "deny"),      // refused: toolgate would deny it anyway
				sh("make", "allow"),
				sh("rm x", "deny"),
				{"mcp_fetch_webpage", map[string]any{"url": "https://docs.example.com/a", "format": "markdown"}, "allow"},
				{"mcp_fetch_webpage", map[string]any{"url": "https://docs.example.com.evil/", "format": "markdown"}, "ask"},
			}},
	} {
		t.Run(s.note, func(t *testing.T) { runSample(t, s) })
	}
}

// TestKnownToolsAreTheEngines keeps the tools a rule may name equal to
// the engine's categories.
func TestKnownToolsAreTheEngines(t *testing.T) {
	want := append(append(append([]string{}, engine.ShellTools...), engine.PathTools...), engine.NetworkTools...)
	if strings.Join(knownTools, ",") != strings.Join(want, ",") {
		t.Errorf("knownTools %v, the engine's %v", knownTools, want)
	}
}

func TestGeminiPriority(t *testing.T) {
	runSample(t, sample{note: "a higher-priority allow over a lower deny decides stricter in toolgate, and says so",
		convert: Gemini, file: "gemini-priority.toml", rules: 7,
		// The make argsPattern is a regexp, which the check takes to meet
		// the git deny: reported, although no call meets both.
		problems: []string{"commandRegex", "toolName=mcp_*", `commandPrefix=[git status git log]`, "argsPattern"},
		stricter: 2,
		calls: []call{
			sh("git status", "deny"), // Gemini allows it (priority 200); toolgate is stricter, reported
			sh("git push", "deny"),
			sh("npm test", "allow"),
			sh("make", "allow"),
			sh("make -j4", "allow"),
			sh("maker", "ask"),
			{"mcp__github__create_issue", map[string]any{"title": "x"}, "ask"},
			{"mcp__github__list_issues", map[string]any{}, "allow"},
		}})
}
