package engine_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/engine/builtin"
	"github.com/toolgate/toolgate/fsview"
	"github.com/toolgate/toolgate/policy"
)

// The three red-team policies, shared by the red-team, metamorphic,
// benign, fuzz and built-in corpus tests. Each is compiled against a real
// directory tree (t.TempDir) with the options store gives the engine: the
// workspace, the home directory and the symlink resolver of a real
// filesystem.
const (
	// policyCareful: bash asks; allow rules for ls, git status, cat, echo
	// and git log; a directory outside the workspace trusted by /add-dir.
	// No built-in rules, so the shell and path analysis stands alone.
	policyCareful = "careful"
	// policyDeveloper: shell, read and write tools allow, external paths
	// ask, and the package built-in rules.
	policyDeveloper = "developer"
	// policyPathOnly: path tools allow, everything else asks, and an
	// external path is denied. No built-in rules.
	policyPathOnly = "path-only"
)

// policyNames lists the three policies in a fixed order.
var policyNames = []string{policyCareful, policyDeveloper, policyPathOnly}

// issueFixture is a home directory with a workspace in it, a directory
// outside the workspace trusted by /add-dir, a secret directory outside
// both, and symlinks inside the workspace that point out of it.
type issueFixture struct {
	root    string // the temp root; nothing outside it is created
	home    string // the server user's home (Options.HomeDir)
	ws      string // the workspace (Options.Workspace)
	trusted string // the /add-dir directory, outside the workspace
	outside string // a directory outside workspace and trusted dir
	opts    engine.Options
	// perms and builtin are the compiled inputs, per policy name.
	perms   map[string]map[string]any
	builtin map[string][]any
	engines map[string]*engine.Engine
}

// fixtureLinks are the symlinks made inside the workspace: name -> target,
// where a target starting with "@" names a fixture directory (@home,
// @trusted, @outside, @root) and anything else is used as it is.
var fixtureLinks = map[string]string{
	"rootlink":  "/",                // a link to the filesystem root
	"etclink":   "/etc",             // an absolute link out
	"homelink":  "@home",            // to the home directory (the workspace's parent)
	"up":        "..",               // relative link to the parent
	"outlink":   "@outside",         // to a directory outside everything trusted
	"trustlink": "@trusted",         // to the trusted directory
	"sub/deep":  "../..",            // a relative link two levels up, from a subdirectory
	"dangle":    "@outside/new.txt", // a dangling link: writing it creates a file outside
}

// trustedLinks are symlinks made inside the trusted directory, with targets
// written as for fixtureLinks.
var trustedLinks = map[string]string{
	"wslink": "@ws", // from the trusted directory back into the workspace
}

// fixtureFiles are ordinary files created in the workspace, so that
// workspace commands name things that exist.
var fixtureFiles = []string{
	"README.md", "Makefile", "go.mod", "main.go", "a.go", "src/app.ts",
	"src/main.go", "scripts/run.sh", "docs/guide.md", ".gitignore",
}

// newIssueFixture builds the tree and compiles the three policies. It fails
// the test when a policy has a validation problem.
func newIssueFixture(t testing.TB) *issueFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.ToSlash(root)
	f := &issueFixture{
		root:    root,
		home:    root + "/home/u",
		ws:      root + "/home/u/project",
		trusted: root + "/opt/trusted",
		outside: root + "/outside",
	}
	for _, d := range []string{f.ws + "/sub", f.ws + "/src", f.ws + "/scripts", f.ws + "/docs",
		f.trusted, f.outside, f.home + "/.ssh", f.home + "/.aws"} {
		mustMkdir(t, d)
	}
	for _, name := range fixtureFiles {
		mustWrite(t, f.ws+"/"+name, "x\n")
	}
	mustWrite(t, f.home+"/.ssh/id_rsa", "secret\n")
	mustWrite(t, f.home+"/.bashrc", "# rc\n")
	mustWrite(t, f.outside+"/secret.txt", "secret\n")
	mustWrite(t, f.trusted+"/data.csv", "a,b\n")
	for name, target := range fixtureLinks {
		if err := os.Symlink(f.expand(target), f.ws+"/"+name); err != nil {
			t.Fatal(err)
		}
	}
	// A hard link in the workspace to a secret outside it: the same file,
	// which no path resolution can tell apart (red-team row c5, out of
	// scope). Skipped where the temp dir cannot hold hard links.
	_ = os.Link(f.home+"/.ssh/id_rsa", f.ws+"/hardkey")
	for name, target := range trustedLinks {
		if err := os.Symlink(f.expand(target), f.trusted+"/"+name); err != nil {
			t.Fatal(err)
		}
	}
	f.opts = engine.Options{
		Workspace:        f.ws,
		HomeDir:          f.home,
		ResolvePath:      fsview.ResolvePath,
		BatchResolvePath: func() func(string) string { return fsview.NewPathResolver().Resolve },
		KindOf:           fsview.KindOf,
	}
	pkg := packageBuiltinRules(t)
	f.perms = map[string]map[string]any{
		policyCareful:   carefulPolicy(f.trusted),
		policyDeveloper: developerPolicy(),
		policyPathOnly:  pathOnlyPolicy(),
	}
	f.builtin = map[string][]any{policyCareful: {}, policyDeveloper: pkg, policyPathOnly: {}}
	f.engines = map[string]*engine.Engine{}
	for _, name := range policyNames {
		e, problems := engine.Compile(f.perms[name], f.builtin[name], f.opts)
		if len(problems) > 0 {
			t.Fatalf("policy %s: problems %v", name, problems)
		}
		f.engines[name] = e
	}
	return f
}

// expand replaces a leading @home, @trusted, @outside or @ws of s with the
// fixture's directory; other text is returned as it is.
func (f *issueFixture) expand(s string) string {
	for _, p := range []struct{ key, dir string }{
		{"@home", f.home}, {"@trusted", f.trusted}, {"@outside", f.outside}, {"@ws", f.ws}, {"@root", f.root},
	} {
		if len(s) >= len(p.key) && s[:len(p.key)] == p.key {
			return p.dir + s[len(p.key):]
		}
	}
	return s
}

// engine returns the compiled engine of a policy; it panics on an unknown
// name, which is a bug in the test.
func (f *issueFixture) engine(name string) *engine.Engine {
	e, ok := f.engines[name]
	if !ok {
		panic("unknown policy " + name)
	}
	return e
}

// evaluate decides one call on the web channel under a policy.
func (f *issueFixture) evaluate(policy, tool string, args map[string]any) engine.Decision {
	return f.engine(policy).Evaluate(&engine.Request{Call: engine.NewCall(tool, args), ChannelID: "web"})
}

// evalShell decides a bash command under a policy.
func (f *issueFixture) evalShell(policy, cmd string) engine.Decision {
	return f.evaluate(policy, "bash", map[string]any{"command": cmd})
}

// readOnlyPathTools are the path tools that only read.
var readOnlyPathTools = []string{"read_file", "read_text_file", "read", "glob_file_search", "glob", "list_dir", "list_files", "grep"}

// carefulPolicy: the default policy (read-only path tools allow, shell and
// write tools ask, external paths ask) with allow rules for five read-only
// commands and trusted as /add-dir leaves it.
func carefulPolicy(trusted string) map[string]any {
	p := basePolicy()
	tools := p["tools"].(map[string]any)
	for _, t := range readOnlyPathTools {
		tools[t] = "allow"
	}
	for _, t := range []string{"bash", "mcp_exec_command", "create_terminal", "write_file", "write_text_file", "write", "edit_file", "search_replace"} {
		tools[t] = "ask"
	}
	var rules []any
	for i, pat := range []string{"ls *", "git status *", "cat *", "echo *", "git log *"} {
		rules = append(rules, map[string]any{
			"id": "careful_" + string(rune('a'+i)), "tools": []any{"bash"}, "pattern": pat, "action": "allow",
		})
	}
	p["rules"] = rules
	p["external_directory"] = map[string]any{"*": "ask", trusted: "allow"}
	p["approval_overrides"] = addDirOverrides(trusted)
	return p
}

// developerPolicy: every shell and path tool allowed, external paths ask.
func developerPolicy() map[string]any {
	p := basePolicy()
	tools := p["tools"].(map[string]any)
	for _, t := range append(append([]string{}, engine.ShellTools...), engine.PathTools...) {
		tools[t] = "allow"
	}
	p["external_directory"] = map[string]any{"*": "ask"}
	return p
}

// pathOnlyPolicy: every path tool allowed, any other tool asks, and an
// external path is denied.
func pathOnlyPolicy() map[string]any {
	p := basePolicy()
	tools := p["tools"].(map[string]any)
	for _, t := range engine.PathTools {
		tools[t] = "allow"
	}
	p["external_directory"] = map[string]any{"*": "deny"}
	return p
}

// basePolicy is a tiered policy with defaults ask and no tools or rules.
func basePolicy() map[string]any {
	return map[string]any{
		"enabled":            true,
		"schema":             "tiered_policy",
		"permission_mode":    "normal",
		"defaults":           map[string]any{"*": "ask"},
		"tools":              map[string]any{},
		"rules":              []any{},
		"approval_overrides": []any{},
	}
}

// addDirOverrides are the two approval overrides `/add-dir dir` appends
// (docs/decisions.md): a path override re:^<dir>(?:$|/) for the path tools and a
// shell override re:.*<dir>.* for the shell tools, ids from sha256(dir).
func addDirOverrides(dir string) []any {
	sum := sha256.Sum256([]byte(dir))
	h := hex.EncodeToString(sum[:])[:16]
	quoted := regexp.QuoteMeta(dir)
	return []any{
		map[string]any{"id": "cli_trusted_path_" + h, "tools": toAny(engine.PathTools), "match_type": "path",
			"pattern": "re:^" + quoted + "(?:$|/)", "action": "allow", "source": "cli_add_dir"},
		map[string]any{"id": "cli_trusted_shell_" + h, "tools": toAny(engine.ShellTools), "match_type": "command",
			"pattern": "re:.*" + quoted + ".*", "action": "allow", "source": "cli_add_dir"},
	}
}

// packageBuiltinRules decodes the package built-in rules (engine/builtin).
func packageBuiltinRules(t testing.TB) []any {
	t.Helper()
	var doc struct {
		Rules []any `yaml:"rules"`
	}
	if err := yaml.Unmarshal(builtin.Default, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Rules
}

func mustMkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t testing.TB, name, text string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(name))
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestIssuePoliciesSanity: each policy allows the plain calls it is meant
// to allow and holds back the ones it is meant to hold back, so the
// obfuscation tests built on them test the tricks, not a closed door.
func TestIssuePoliciesSanity(t *testing.T) {
	f := newIssueFixture(t)
	cases := []struct {
		note   string
		policy string
		tool   string
		args   map[string]any
		want   policy.Level
	}{
		{"careful: ls allowed", policyCareful, "bash", cmdArgs("ls -la"), policy.Allow},
		{"careful: git status allowed", policyCareful, "bash", cmdArgs("git status --short"), policy.Allow},
		{"careful: cat in the workspace allowed", policyCareful, "bash", cmdArgs("cat README.md"), policy.Allow},
		{"careful: echo allowed", policyCareful, "bash", cmdArgs("echo hello"), policy.Allow},
		{"careful: git log allowed", policyCareful, "bash", cmdArgs("git log --oneline -5"), policy.Allow},
		{"careful: rm asks", policyCareful, "bash", cmdArgs("rm -rf build"), policy.Ask},
		{"careful: cat of a secret asks", policyCareful, "bash", cmdArgs("cat /etc/shadow"), policy.Ask},
		{"careful: ls of the trusted dir allowed", policyCareful, "bash", cmdArgs("ls " + f.trusted), policy.Allow},
		{"careful: read in the trusted dir allowed", policyCareful, "read_file", pathArgs(f.trusted + "/data.csv"), policy.Allow},
		{"careful: read outside asks", policyCareful, "read_file", pathArgs(f.outside + "/secret.txt"), policy.Ask},
		{"careful: write asks", policyCareful, "write_file", pathArgs("src/new.go"), policy.Ask},
		{"developer: build allowed", policyDeveloper, "bash", cmdArgs("make -j4"), policy.Allow},
		{"developer: rm in the workspace allowed", policyDeveloper, "bash", cmdArgs("rm -f build/out.o"), policy.Allow},
		{"developer: write in the workspace allowed", policyDeveloper, "write_file", pathArgs("src/main.go"), policy.Allow},
		{"developer: cat outside asks", policyDeveloper, "bash", cmdArgs("cat " + f.outside + "/secret.txt"), policy.Ask},
		{"developer: rm -rf / denied by a built-in rule", policyDeveloper, "bash", cmdArgs("rm -rf /"), policy.Deny},
		{"developer: read outside asks", policyDeveloper, "read_file", pathArgs("/etc/hosts"), policy.Ask},
		{"path-only: read allowed", policyPathOnly, "read_file", pathArgs("src/main.go"), policy.Allow},
		{"path-only: write allowed", policyPathOnly, "write_file", pathArgs("src/main.go"), policy.Allow},
		{"path-only: read outside denied", policyPathOnly, "read_file", pathArgs("/etc/hosts"), policy.Deny},
		{"path-only: shell asks", policyPathOnly, "bash", cmdArgs("ls"), policy.Ask},
		{"path-only: shell outside denied", policyPathOnly, "bash", cmdArgs("cat /etc/hosts"), policy.Deny},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			got := f.evaluate(c.policy, c.tool, c.args)
			if got.Level != c.want {
				t.Errorf("%s %v: got %s (rule %q, reason %q), want %s", c.tool, c.args, got.Level, got.MatchedRule, got.Reason, c.want)
			}
		})
	}
}

func cmdArgs(cmd string) map[string]any { return map[string]any{"command": cmd} }

func pathArgs(p string) map[string]any { return map[string]any{"path": p} }
