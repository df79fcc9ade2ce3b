package engine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/engine/shell"
	"github.com/toolgate/toolgate/policy"
)

// launchPolicy allows every shell command but denies git push: a launcher
// that the analysis does not see through would let the push run.
func launchPolicy(t *testing.T) *engine.Engine {
	t.Helper()
	perms := map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "ask"}, "tools": map[string]any{"bash": "allow"},
		"rules":              []any{map[string]any{"id": "no_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "deny"}},
		"external_directory": map[string]any{"*": "allow"}}
	e, problems := engine.Compile(perms, nil, engine.Options{Workspace: "/ws", HomeDir: "/home/u"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return e
}

func decideShell(e *engine.Engine, cmd string) engine.Decision {
	return e.Evaluate(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": cmd}), ChannelID: "web"})
}

// TestUnlistedLaunchers: a program that is not known to leave its arguments
// alone decides like the command it may launch, whether or not any list
// names it as a launcher; program names compare without a Windows
// executable suffix; options before a subcommand do not hide it. The
// allowed rows are ordinary calls that must stay allowed.
func TestUnlistedLaunchers(t *testing.T) {
	e := launchPolicy(t)
	cases := []struct {
		note, cmd string
		want      policy.Level
	}{
		// GTFOBins lists setarch, linux64 and gdb as ways to run a program.
		{"setarch", "setarch x86_64 git push origin main", policy.Deny},
		{"linux64", "linux64 git push origin main", policy.Deny},
		{"chronic (moreutils)", "chronic git push origin main", policy.Deny},
		{"systemd-inhibit", "systemd-inhibit --what=idle git push origin main", policy.Deny},
		{"gdb --args", "gdb -q -batch -ex run --args git push origin main", policy.Deny},
		{"a launcher nobody listed", "frobnicate --fast git push --force", policy.Deny},
		{"a launcher of a wrapper", "chronic sudo git push origin main", policy.Deny},
		{"a launcher of a shell", "setarch x86_64 sh -c 'git push origin main'", policy.Deny},
		{"a launcher of bash -c with quotes", `chronic bash -c "git push origin main"`, policy.Deny},
		{"a wrapper of a launcher", "nice -n 5 chronic git push origin main", policy.Deny},
		{"coproc", "coproc git push origin main", policy.Deny},
		{"coproc with a name", "coproc P { git push origin main; }", policy.Deny},
		{"a path to a launcher", "/usr/bin/setarch x86_64 /usr/bin/git push origin main", policy.Deny},
		{"git.exe", "git.exe push origin main", policy.Deny},
		{"GIT.EXE in upper case", "GIT.EXE push origin main", policy.Deny},
		{"a Windows path to git.exe", `C:\Git\bin\git.exe push origin main`, policy.Deny},
		{"git.cmd under a launcher", "chronic git.cmd push origin main", policy.Deny},
		{"-C before the subcommand", "git -C . push origin main", policy.Deny},
		{"-c and --no-pager before it", "git -c k=v --no-pager push origin main", policy.Deny},
		{"--git-dir=", "git --git-dir=.git push origin main", policy.Deny},
		{"options before, under a launcher", "chronic git -C /ws push origin main", policy.Deny},

		{"git status", "git status", policy.Allow},
		{"git log with options", "git log --oneline -n 5", policy.Allow},
		{"git commit naming push", "git commit -m push", policy.Allow},
		{"git rm", "git rm -r --cached build", policy.Allow},
		{"echo of the words", "echo git push origin main", policy.Allow},
		{"grep for the words", `grep -rn "git push" docs`, policy.Allow},
		{"npm run", "npm run build --silent", policy.Allow},
		{"go test", "go test ./...", policy.Allow},
		{"make", "make test", policy.Allow},
		{"git -C status", "git -C sub status", policy.Allow},
		{"git -C log naming push", "git -C . log --grep fix", policy.Allow},
		{"cargo build", "cargo build --release", policy.Allow},
		{"python -m pytest", "python -m pytest tests", policy.Allow},
		{"git fetch", "git fetch origin", policy.Allow},
	}
	for _, c := range cases {
		if d := decideShell(e, c.cmd); d.Level != c.want {
			t.Errorf("%s: %q is %s (%s), want %s", c.note, c.cmd, d.Level, d.MatchedRule, c.want)
		}
	}
}

// TestEveryProgramOnPathMayLaunch grows the launcher table from this host:
// every program on PATH, put before git push, is denied unless the analysis
// lists it as leaving its arguments alone, or reads it exactly as a wrapper
// (chroot git push runs push in the root git; the wrapper table's own tests
// hold those). A launcher no one thought of is
// denied by default, not by an entry.
func TestEveryProgramOnPathMayLaunch(t *testing.T) {
	e := launchPolicy(t)
	seen := map[string]bool{}
	checked := 0
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, ent := range entries {
			name := ent.Name()
			if seen[name] || strings.ContainsAny(name, " \t'\"$=`\\") || strings.HasPrefix(name, "-") {
				continue
			}
			seen[name] = true
			if shell.LeavesArgsAlone(name, "git") || shell.ReadsExactly(name) {
				continue
			}
			checked++
			for _, cmd := range []string{name + " git push origin main", name + " -x 1 git push origin main"} {
				if d := decideShell(e, cmd); d.Level == policy.Allow {
					t.Errorf("%q is allowed (%s): %s may launch git push", cmd, d.MatchedRule, name)
				}
			}
		}
	}
	if checked < 50 {
		t.Skipf("only %d programs on PATH", checked)
	}
	t.Logf("%d programs on PATH checked as launchers", checked)
}

// TestLaunchersReallyLaunch runs the launchers of the table that this host
// has in real bash, with a stand-in git that records its arguments: each
// does run the command after it, which is why it must decide like it.
func TestLaunchersReallyLaunch(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	record := filepath.Join(dir, "ran")
	stub := "#!/bin/sh\necho \"$*\" > " + record + "\n"
	for _, name := range []string{"git", "git.exe"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e := launchPolicy(t)
	ran := 0
	for _, c := range []struct{ program, cmd string }{
		{"setarch", "setarch x86_64 git push origin main"},
		{"linux64", "linux64 git push origin main"},
		{"chronic", "chronic git push origin main"},
		{"gdb", "gdb -q -batch -ex run --args git push origin main"},
		{"taskset", "taskset 1 git push origin main"},
		{"git", "git.exe push origin main"},
		{"bash", "coproc git push origin main; wait"},
	} {
		if _, err := exec.LookPath(c.program); err != nil {
			continue
		}
		os.Remove(record)
		cmd := exec.Command(bash, "-c", c.cmd)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
		_ = cmd.Run()
		got, err := os.ReadFile(record)
		if err != nil || strings.TrimSpace(string(got)) != "push origin main" {
			t.Logf("%q did not run the stand-in here (%q, %v)", c.cmd, got, err)
			continue
		}
		ran++
		if d := decideShell(e, c.cmd); d.Level != policy.Deny {
			t.Errorf("%q runs git push in bash but is %s (%s)", c.cmd, d.Level, d.MatchedRule)
		}
	}
	if ran < 3 {
		t.Errorf("only %d launchers ran the stand-in", ran)
	}
}

// TestWindowsProgramNamesFoldCase: on a Windows workspace a program name
// compares case-insensitively (GIT push is git push); elsewhere the name is
// taken as written.
func TestWindowsProgramNamesFoldCase(t *testing.T) {
	perms := map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "ask"}, "tools": map[string]any{"bash": "allow"},
		"rules":              []any{map[string]any{"id": "no_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "deny"}},
		"external_directory": map[string]any{"*": "allow"}}
	e, problems := engine.Compile(perms, nil, engine.Options{Workspace: "C:/work/project", HomeDir: "C:/Users/me"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	for _, c := range []struct {
		cmd  string
		want policy.Level
	}{
		{"GIT push origin main", policy.Deny},
		{"Git push origin main", policy.Deny},
		{"chronic GIT push origin main", policy.Deny},
		{"Git status", policy.Allow},
	} {
		if d := decideShell(e, c.cmd); d.Level != c.want {
			t.Errorf("windows workspace: %q is %s (%s), want %s", c.cmd, d.Level, d.MatchedRule, c.want)
		}
	}
	if d := decideShell(launchPolicy(t), "GIT push origin main"); d.Level != policy.Allow {
		t.Errorf("posix workspace: GIT push is %s (%s), want allow (another program)", d.Level, d.MatchedRule)
	}
}

// TestAddDirSpellings: an /add-dir directory is trusted in the shell under
// every spelling of it (~, $HOME, a relative path), judged on the resolved
// path, and never wider than the directory.
func TestAddDirSpellings(t *testing.T) {
	perms := map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "ask"}, "tools": map[string]any{},
		"approval_overrides": []any{map[string]any{"id": "cli_trusted_shell_0123456789abcdef", "tools": []any{"bash"},
			"match_type": "command", "pattern": `re:.*/home/u/datasets.*`, "action": "allow", "source": "cli_add_dir"}},
		"external_directory": map[string]any{"*": "ask", "/home/u/datasets": "allow"}}
	e, problems := engine.Compile(perms, nil, engine.Options{Workspace: "/home/u/project", HomeDir: "/home/u"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	for _, c := range []struct {
		cmd  string
		want policy.Level
	}{
		{"ls /home/u/datasets", policy.Allow},
		{"ls ~/datasets", policy.Allow},
		{"ls $HOME/datasets", policy.Allow},
		{"ls ../datasets/train", policy.Allow},
		{"ls ~/datasets-private", policy.Ask},
		{"ls ~/datasets/../.ssh", policy.Ask},
		{"cat ~/datasets/a ~/.ssh/id_rsa", policy.Ask},
		{"ls ~/other", policy.Ask},
	} {
		if d := decideShell(e, c.cmd); d.Level != c.want {
			t.Errorf("%q is %s (%s), want %s", c.cmd, d.Level, d.MatchedRule, c.want)
		}
	}
}
