package engine_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/fsview"
	"github.com/toolgate/toolgate/policy"
)

// pathsFixture is a real tree for the path tests (symlinks, dot-dot, links
// and 7): a home with a workspace, a directory trusted by /add-dir and one
// outside both, and symlinks in the workspace that lead out of it.
type pathsFixture struct {
	home, ws, trusted, outside string
	opts                       engine.Options
}

func newPathsFixture(t *testing.T) pathsFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.ToSlash(root)
	f := pathsFixture{home: root + "/home/u", ws: root + "/home/u/ws", trusted: root + "/trusted", outside: root + "/outside"}
	for _, d := range []string{f.ws + "/src", f.ws + "/sub/deep", f.trusted + "/docs", f.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{f.ws + "/src/a.go", f.ws + "/notalink", f.trusted + "/docs/x.md", f.outside + "/secret"} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		f.ws + "/rootlink":    "/",
		f.ws + "/etclink":     "/etc",
		f.ws + "/evil":        f.outside + "/secret", // a bare word that leads out
		f.ws + "/sub/up":      "../..",
		f.ws + "/trustlink":   f.trusted,
		f.ws + "/loop1":       "loop2",
		f.ws + "/loop2":       "loop1",
		f.trusted + "/escape": f.outside,
	}
	for name, target := range links {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	f.opts = engine.Options{Workspace: f.ws, HomeDir: f.home, ResolvePath: fsview.ResolvePath, KindOf: fsview.KindOf, CallKindOf: fsview.CallKindOf}
	return f
}

func (f pathsFixture) x(s string) string {
	return strings.NewReplacer("@ws", f.ws, "@trusted", f.trusted, "@outside", f.outside, "@homes", filepath.ToSlash(filepath.Dir(f.home)), "@home", f.home).Replace(s)
}

// xAll is x applied to every string of a decoded JSON value.
func (f pathsFixture) xAll(v any) any {
	switch t := v.(type) {
	case string:
		return f.x(t)
	case []any:
		out := make([]any, len(t))
		for i, item := range t {
			out[i] = f.xAll(item)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, item := range t {
			out[k] = f.xAll(item)
		}
		return out
	}
	return v
}

// pathsCase is one row: a call, the level wanted and an external path that
// must be listed ("" for none required; "-" for no external path at all).
type pathsCase struct {
	note     string
	tool     string
	args     map[string]any
	level    policy.Level
	external string
}

func runPathsCases(t *testing.T, f pathsFixture, e *engine.Engine, cases []pathsCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			args := f.xAll(c.args).(map[string]any)
			d := e.Evaluate(&engine.Request{Call: engine.NewCall(c.tool, args), ChannelID: "web"})
			if d.Level != c.level {
				t.Errorf("level: got %s (%q, external %q), want %s", d.Level, d.MatchedRule, d.ExternalPaths, c.level)
			}
			switch want := f.x(c.external); {
			case c.external == "-" && len(d.ExternalPaths) > 0:
				t.Errorf("external: got %q, want none", d.ExternalPaths)
			case c.external != "" && c.external != "-" && !slices.Contains(d.ExternalPaths, want):
				t.Errorf("external: got %q, want %q among them", d.ExternalPaths, want)
			}
		})
	}
}

func shellArgs(cmd string) map[string]any { return map[string]any{"command": cmd} }

// TestPathsResolvedAsKernel: paths are judged where the kernel would open
// them (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm): symlinks before .., the working
// directory as a path, bare words that are links, unknown parts external.
func TestPathsResolvedAsKernel(t *testing.T) {
	f := newPathsFixture(t)
	perms := map[string]any{"schema": "tiered_policy", "defaults": map[string]any{"*": "allow"},
		"external_directory": map[string]any{"*": "ask", f.trusted: "allow"}}
	e, problems := engine.Compile(perms, nil, f.opts)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	runPathsCases(t, f, e, kernelCases)
	// Without KindOf the engine looks no bare word up (no filesystem).
	noLstat := f.opts
	noLstat.KindOf, noLstat.CallKindOf = nil, nil
	e, _ = engine.Compile(perms, nil, noLstat)
	runPathsCases(t, f, e, []pathsCase{{"no KindOf: a bare word is not looked up", "bash", shellArgs("cat evil"), policy.Allow, "-"}})
}

// kernelCases are the rows of TestPathsResolvedAsKernel.
var kernelCases = []pathsCase{
	{"a link to / then ../.. leaves the workspace", "bash", shellArgs("cat rootlink/../.."), policy.Ask, "/"},
	{"a link to / then ../etc in a path value", "read_file", map[string]any{"path": "rootlink/../etc/passwd"}, policy.Ask, "/etc/passwd"},
	{"a link then .. in an absolute value", "read_file", map[string]any{"path": "@ws/etclink/../root/x"}, policy.Ask, "/root/x"},
	{"a relative link with .. in its target", "bash", shellArgs("cat sub/up/x"), policy.Ask, "@home/x"},
	{"plain .. that stays inside", "bash", shellArgs("cat sub/deep/../../src/a.go"), policy.Allow, "-"},
	{"a bare word that is a link out", "bash", shellArgs("cat evil"), policy.Ask, "@outside/secret"},
	{"a bare word after options and a wrapper", "bash", shellArgs("nice -n 5 cat -v evil"), policy.Ask, "@outside/secret"},
	{"a bare word in a compound command", "bash", shellArgs("echo hi && wc -l evil"), policy.Ask, "@outside/secret"},
	{"a bare word that is a plain file", "bash", shellArgs("cat notalink"), policy.Allow, "-"},
	{"a bare word that does not exist", "bash", shellArgs("git status"), policy.Allow, "-"},
	{"workdir outside is a path itself", "bash", map[string]any{"command": "cat shadow", "workdir": "/etc"}, policy.Ask, "/etc"},
	{"cwd outside is a path itself", "bash", map[string]any{"command": "ls", "cwd": "/etc"}, policy.Ask, "/etc"},
	{"a relative workdir through a link", "bash", map[string]any{"command": "cat etc/passwd", "workdir": "rootlink"}, policy.Ask, "/etc/passwd"},
	{"a workdir inside; .. from it stays inside", "bash", map[string]any{"command": "cat ../src/a.go", "workdir": "sub"}, policy.Allow, "-"},
	{"a bare link word against the workdir", "bash", map[string]any{"command": "cat evil", "workdir": "@ws"}, policy.Ask, "@outside/secret"},
	{"an unset variable prefix is unknown, so external", "bash", shellArgs("cat $X/etc/shadow"), policy.Ask, ""},
	{"$PWD/.. leaves the workspace", "bash", shellArgs("cat $PWD/../../etc/passwd"), policy.Ask, "@homes/etc/passwd"},
	{".. after a link loop is unknown", "bash", shellArgs("cat loop1/../x"), policy.Ask, ""},
	{"a nested path value through a link", "edit_file", map[string]any{"edits": []any{map[string]any{"file_path": "rootlink/etc/hosts"}}}, policy.Ask, "/etc/hosts"},
	{"a link to the trusted dir is judged as the trusted dir", "bash", shellArgs("cat trustlink/docs/x.md"), policy.Allow, "@trusted/docs/x.md"},
	{"a link inside the trusted dir that leads out", "read_file", map[string]any{"path": "@trusted/escape/secret"}, policy.Ask, "@outside/secret"},
	{"a file: URL", "bash", shellArgs("curl -s file://@outside/secret"), policy.Ask, "@outside/secret"},
	{"an unknown scheme is a path with ..", "bash", shellArgs("cat ab://../../x"), policy.Ask, "@home/x"},
	{"a network URL is no path", "bash", shellArgs("curl https://example.com/../../etc"), policy.Allow, "-"},
}

// TestUnknownPathLevel: an unknown path is under no allow key: with a map it
// gets the strictest of "*" and every key (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
func TestUnknownPathLevel(t *testing.T) {
	f := newPathsFixture(t)
	perms := map[string]any{"schema": "tiered_policy", "defaults": map[string]any{"*": "allow"},
		"external_directory": map[string]any{"*": "allow", "/etc": "deny"}}
	e, _ := engine.Compile(perms, nil, f.opts)
	runPathsCases(t, f, e, []pathsCase{
		{"a known external path takes its key", "bash", shellArgs("cat /tmp/x"), policy.Allow, "/tmp/x"},
		{"a known path under a deny key", "bash", shellArgs("cat /etc/hosts"), policy.Deny, "/etc/hosts"},
		{"an unknown path may be under the deny key", "bash", shellArgs("cat $X/hosts"), policy.Deny, ""},
		{"an unknown workdir", "bash", map[string]any{"command": "ls", "workdir": "loop1/../x"}, policy.Deny, ""},
	})
}

// pathsOverrides are the approval overrides of TestOverridesStayInside:
// /add-dir's two for the trusted dir (docs/decisions.md), and two "always allow"
// ones, a relative path and an exact command.
func pathsOverrides(f pathsFixture) []any {
	q := regexp.QuoteMeta(f.trusted)
	return []any{
		map[string]any{"id": "cli_trusted_path_0123456789abcdef", "tools": []any{"read_file", "write_file", "edit_file"}, "match_type": "path",
			"pattern": "re:^" + q + "(?:$|/)", "action": "allow", "source": "cli_add_dir"},
		map[string]any{"id": "cli_trusted_shell_0123456789abcdef", "tools": []any{"bash"}, "match_type": "command",
			"pattern": "re:.*" + q + ".*", "action": "allow", "source": "cli_add_dir"},
		map[string]any{"id": "user_allow_read_file_path_src_a_go", "tools": []any{"read_file"}, "match_type": "path",
			"pattern": "src/a.go", "action": "allow", "source": "user_approval"},
		map[string]any{"id": "user_allow_bash_command_make_build", "tools": []any{"bash"}, "match_type": "command",
			"pattern": "make build", "action": "allow", "source": "user_approval"},
	}
}

// TestOverridesStayInside: an approval override allows a call only when
// the call stays inside what was approved (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
func TestOverridesStayInside(t *testing.T) {
	f := newPathsFixture(t)
	perms := map[string]any{"schema": "tiered_policy", "defaults": map[string]any{"*": "ask"},
		"tools":              map[string]any{"bash": "ask", "read_file": "ask", "write_file": "ask", "edit_file": "ask"},
		"approval_overrides": pathsOverrides(f),
		"external_directory": map[string]any{"*": "ask", f.trusted: "allow"}}
	e, problems := engine.Compile(perms, nil, f.opts)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	runPathsCases(t, f, e, []pathsCase{
		{"path: a file in the trusted dir", "read_file", map[string]any{"path": "@trusted/docs/x.md"}, policy.Allow, ""},
		{"path: every value in the trusted dir", "read_file", map[string]any{"paths": []any{"@trusted/a", "@trusted/docs/b"}}, policy.Allow, ""},
		{"path: .. out of the trusted dir", "read_file", map[string]any{"path": "@trusted/../outside/secret"}, policy.Ask, ""},
		{"path: a decoy second value", "write_file", map[string]any{"path": "@trusted/a", "dest_path": "@outside/secret"}, policy.Ask, ""},
		{"path: a decoy nested value", "edit_file", map[string]any{"file_path": "@trusted/a", "edits": []any{map[string]any{"file_path": "@home/.bashrc"}}}, policy.Ask, ""},
		{"path: a link in the trusted dir that leads out", "read_file", map[string]any{"path": "@trusted/escape/secret"}, policy.Ask, ""},
		{"path: content with a slash inside the workspace is no decoy", "write_file", map[string]any{"path": "@trusted/a.txt", "content": "a/b"}, policy.Allow, ""},
		{"path: a remembered relative path", "read_file", map[string]any{"path": "src/a.go"}, policy.Allow, "-"},
		{"path: the remembered path plus another value", "read_file", map[string]any{"path": "src/a.go", "file": "/etc/passwd"}, policy.Ask, ""},
		{"shell: a path word in the trusted dir", "bash", shellArgs("ls @trusted/docs"), policy.Allow, ""},
		{"shell: from the trusted dir into the workspace", "bash", shellArgs("cp @trusted/docs/x.md src/x.md"), policy.Allow, ""},
		{"shell: the dir only in a comment", "bash", shellArgs("rm -rf src # @trusted"), policy.Ask, ""},
		{"shell: the dir only in text given to another program", "bash", shellArgs("python3 -c 'print(1)' '# @trusted'"), policy.Ask, ""},
		{"shell: a second path word outside", "bash", shellArgs("cat @trusted/docs/x.md ~/.ssh/id_rsa"), policy.Ask, ""},
		{"shell: .. out of the trusted dir", "bash", shellArgs("cat @trusted/../outside/secret"), policy.Ask, ""},
		{"shell: a link out of the trusted dir", "bash", shellArgs("cat @trusted/escape/secret"), policy.Ask, ""},
		{"shell: $HOME beside the dir", "bash", shellArgs("ls @trusted $HOME"), policy.Ask, ""},
		{"shell: an unknown word beside the dir", "bash", shellArgs("rm -rf $X @trusted/docs"), policy.Ask, ""},
		{"shell: a path inside sh -c", "bash", shellArgs("sh -c 'rm -rf /' @trusted"), policy.Ask, ""},
		{"shell: a workdir outside both", "bash", map[string]any{"command": "ls @trusted", "workdir": "@outside"}, policy.Ask, ""},
		{"shell: a remembered exact command", "bash", shellArgs("make build"), policy.Allow, "-"},
		{"shell: a remembered command, chained", "bash", shellArgs("make build; rm -rf src"), policy.Ask, ""},
	})
}

// TestAddDirOverrideForm: an /add-dir shell override whose pattern is not
// re:.*<escaped dir>.* never allows.
func TestAddDirOverrideForm(t *testing.T) {
	f := newPathsFixture(t)
	perms := map[string]any{"schema": "tiered_policy", "defaults": map[string]any{"*": "ask"},
		"approval_overrides": []any{map[string]any{"id": "cli_trusted_shell_x", "tools": []any{"bash"}, "match_type": "command",
			"pattern": "re:.*", "action": "allow", "source": "cli_add_dir"}}}
	e, _ := engine.Compile(perms, nil, f.opts)
	runPathsCases(t, f, e, []pathsCase{
		{"a widened pattern allows nothing", "bash", shellArgs("ls @ws/src"), policy.Ask, ""},
	})
}

// TestResolvedNormsMeetDenyRules: a deny rule that names an absolute place
// also meets a command that names it relative to an outside workdir or
// through a link (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm: the normalized form with resolved paths),
// and a word that resolves inside the workspace is left as written.
func TestResolvedNormsMeetDenyRules(t *testing.T) {
	f := newPathsFixture(t)
	perms := map[string]any{"schema": "tiered_policy", "defaults": map[string]any{"*": "allow"},
		"tools": map[string]any{"bash": "allow"},
		"rules": []any{map[string]any{"id": "no_rm_etc", "tools": []any{"bash"}, "pattern": "re:^rm -rf /etc(/|$)", "action": "deny"},
			map[string]any{"id": "no_rm_ws", "tools": []any{"bash"}, "pattern": "re:^rm -rf /.*/ws/", "action": "deny"}},
		"external_directory": map[string]any{"*": "ask"}}
	e, problems := engine.Compile(perms, nil, f.opts)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	runPathsCases(t, f, e, []pathsCase{
		{"as written", "bash", shellArgs("rm -rf /etc/x"), policy.Deny, ""},
		{"relative to an outside workdir", "bash", map[string]any{"command": "rm -rf x", "workdir": "/etc"}, policy.Deny, ""},
		{"through a link", "bash", shellArgs("rm -rf etclink/x"), policy.Deny, ""},
		{"through .. from a link to /", "bash", shellArgs("rm -rf rootlink/../etc"), policy.Deny, ""},
		{"a workspace word keeps its text", "bash", shellArgs("rm -rf src/old"), policy.Allow, "-"},
	})
}

// TestResolvedPathValuesMeetDenyRules: a path tool's value that resolves
// outside the workspace through a link or .. meets the deny and ask rules
// that name where it leads, even where external paths are allowed.
func TestResolvedPathValuesMeetDenyRules(t *testing.T) {
	f := newPathsFixture(t)
	perms := map[string]any{"schema": "tiered_policy", "defaults": map[string]any{"*": "allow"},
		"tools": map[string]any{"read_file": "allow"},
		"rules": []any{map[string]any{"id": "no_shadow", "tools": []any{"read_file"}, "pattern": "/etc/shadow", "action": "deny"},
			map[string]any{"id": "ask_secret", "tools": []any{"read_file"}, "pattern": "re:/outside/secret$", "action": "ask"}},
		"external_directory": map[string]any{"*": "allow"}}
	e, problems := engine.Compile(perms, nil, f.opts)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	runPathsCases(t, f, e, []pathsCase{
		{"as written", "read_file", map[string]any{"path": "/etc/shadow"}, policy.Deny, ""},
		{"through a link", "read_file", map[string]any{"path": "etclink/shadow"}, policy.Deny, "/etc/shadow"},
		{"through a link to / and ..", "read_file", map[string]any{"path": "rootlink/../etc/shadow"}, policy.Deny, "/etc/shadow"},
		{"nested, through a link", "read_file", map[string]any{"args": map[string]any{"path": "etclink/shadow"}}, policy.Deny, "/etc/shadow"},
		{"an ask rule through a bare link", "read_file", map[string]any{"path": "evil"}, policy.Ask, "@outside/secret"},
		{"another external file stays allowed", "read_file", map[string]any{"path": "etclink/hostname"}, policy.Allow, "/etc/hostname"},
	})
}

// TestBareWordCacheTightensAtOnce: a name the engine looked up and found
// absent (the answer the bare-word cache keeps once the directory is
// older than its margin) is judged again the moment it becomes a link out,
// through every spelling of the word the analysis expands; waiting does not
// bring the old answer back (docs/decisions.md#bare-word-lookups-are-cached-by-the-directorys-change-stamp).
func TestBareWordCacheTightensAtOnce(t *testing.T) {
	f := newPathsFixture(t)
	perms := map[string]any{"schema": "tiered_policy", "defaults": map[string]any{"*": "allow"},
		"external_directory": map[string]any{"*": "ask"}}
	e, problems := engine.Compile(perms, nil, f.opts)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	spellings := []string{"cat fresh", `cat "fresh"`, "cat $'fresh'", "cat fr{esh,}", "nice cat fresh", "cat -- fresh"}
	absent := make([]pathsCase, 0, len(spellings))
	linked := make([]pathsCase, 0, len(spellings))
	for _, s := range spellings {
		absent = append(absent, pathsCase{"absent: " + s, "bash", shellArgs(s), policy.Allow, "-"})
		linked = append(linked, pathsCase{"a link out: " + s, "bash", shellArgs(s), policy.Ask, "@outside/secret"})
	}
	time.Sleep(150 * time.Millisecond) // the workspace is now old enough for answers to be kept
	runPathsCases(t, f, e, absent)
	runPathsCases(t, f, e, absent) // answered from the cache
	if err := os.Symlink(f.outside+"/secret", f.ws+"/fresh"); err != nil {
		t.Fatal(err)
	}
	runPathsCases(t, f, e, linked)
	time.Sleep(150 * time.Millisecond)
	runPathsCases(t, f, e, linked)
}
