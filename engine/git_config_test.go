package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestGitConfigAsks checks that the default built-in rules ask before a
// write to git's config, under a policy that allows everything else: git
// runs the commands that config names on its own, so whoever writes it
// decides what the next allowed git status runs
// (docs/decisions.md#git-config-asks). The ordinary git calls and files
// beside it stay allowed, so "ask everything" fails this test too.
func TestGitConfigAsks(t *testing.T) {
	e := builtinOnlyEngine(t)
	write := func(path string) *Request { return writeCall(path, "[core]\n\tfsmonitor = touch /tmp/pwned\n") }
	edit := editCall
	held := []struct {
		note string
		req  *Request
	}{
		{"the repository's config", write("/ws/project/.git/config")},
		{"relative", write(".git/config")},
		{"an edit", edit("/ws/project/.git/config")},
		{"a worktree's config", write("/ws/project/.git/worktrees/w1/config.worktree")},
		{"the main worktree's config", write("/ws/project/.git/config.worktree")},
		{"a submodule's config", write("/ws/project/.git/modules/lib/config")},
		{"upper case on a case-insensitive disk", write("/ws/project/.GIT/CONFIG")},
		{"cp over it", shellCall("bash", "cp /tmp/evil .git/config")},
		{"sed -i", shellCall("bash", `sed -i 's/^\[core\]/[core]\n\tpager = sh -c id/' .git/config`)},
		{"mv over it", shellCall("bash", "mv evil ./.git/config")},
		{"tee", shellCall("bash", "printf x | tee -a .git/config")},
		{"a redirect", shellCall("bash", "echo '[alias] st = !id' >> .git/config")},
		{"a quoted path", shellCall("bash", `python3 -c "open('.git/config','a').write('x')"`)},
		{"read, too", shellCall("bash", "cat .git/config")},
		// Other spellings: the config named another way, or the .git
		// directory named as the place a file named config goes.
		{"a doubled slash", shellCall("bash", "cp evil .git//config")},
		{"quoted apart", shellCall("bash", `cp evil ".git"/config`)},
		{"a backslash inside", shellCall("bash", `cp evil .g\it/config`)},
		{"through ..", shellCall("bash", "cp evil x/../.git/config")},
		{"brace expansion", shellCall("bash", "cp evil .git/{config,x}")},
		{"install -D", shellCall("bash", "install -D evil .git/config")},
		{"a link put in its place", shellCall("bash", "ln -sf /tmp/evil .git/config")},
		{"cp into the directory", shellCall("bash", "cp /tmp/x/config .git/")},
		{"cp -t", shellCall("bash", "cp -t .git /tmp/x/config")},
		{"mv into the directory", shellCall("bash", "mv config .git")},
		{"./.git", shellCall("bash", "cp config ./.git")},
		{".git/.", shellCall("bash", "cp config .git/.")},
		{"tar extracting into it", shellCall("bash", "tar -C .git -xf evil.tar")},
		{"unzip into it", shellCall("bash", "unzip -o evil.zip -d .git")},
	}
	for _, c := range held {
		if d := e.Evaluate(c.req); d.Level == policy.Allow {
			t.Errorf("%s: allowed (%s)", c.note, d.MatchedRule)
		}
	}
	benign := []struct {
		note string
		req  *Request
	}{
		{"a source file", write("/ws/project/src/config")},
		{"a config directory", write("/ws/project/config/app.yaml")},
		{"git's attributes (they only name drivers a config defines)", write("/ws/project/.gitattributes")},
		{"git's ignore file", edit("/ws/project/.gitignore")},
		{"a file named config in a .github folder", write("/ws/project/.github/config")},
		{"git status", shellCall("bash", "git status --short")},
		{"git config read", shellCall("bash", "git config --get user.name")},
		{"git log", shellCall("bash", "git log --oneline -5")},
		{"a word that only ends in .git", shellCall("bash", "git clone https://example.com/x.git config")},
		{"cat of a config file", shellCall("bash", "cat src/config")},
		{"grep leaving .git out", shellCall("bash", "grep -rn TODO . --exclude-dir=.git")},
		{"find leaving .git out", shellCall("bash", "find . -name '*.go' -not -path './.git/*'")},
		{"rg leaving .git out", shellCall("bash", "rg -g '!.git' TODO")},
		{"a file under .git that names no command", shellCall("bash", "cat .git/HEAD")},
		{"the ignore file", shellCall("bash", "cat .gitignore")},
	}
	for _, c := range benign {
		if d := e.Evaluate(c.req); d.Level != policy.Allow {
			t.Errorf("%s: %s by %s, want allow", c.note, d.Level, d.MatchedRule)
		}
	}
}

// TestGitConfigRunsCommands shows, with the real git, why the file is held
// back: a core.fsmonitor written into .git/config runs on a plain git
// status.
func TestGitConfigRunsCommands(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	run := func(args ...string) {
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		_, _ = cmd.CombinedOutput()
	}
	run("init", "-q")
	f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("[core]\n\tfsmonitor = \"touch '" + strings.ReplaceAll(marker, "'", "") + "'; false\"\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	run("status", "--short")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("git status did not run the fsmonitor command written to .git/config: %v", err)
	}
}

// TestKubeconfigOptionAsks: a kubeconfig given on the command line names
// the commands kubectl runs to get credentials, so it asks, under a policy
// that allows everything else; kubectl without one stays allowed.
func TestKubeconfigOptionAsks(t *testing.T) {
	e := builtinOnlyEngine(t)
	for _, c := range []struct {
		note, cmd string
		want      policy.Level
	}{
		{"a separate value", "kubectl get pods --kubeconfig evil.yaml", policy.Ask},
		{"with =", "kubectl get pods --kubeconfig=evil.yaml", policy.Ask},
		{"before the subcommand", "kubectl --kubeconfig ./k.yaml get pods", policy.Ask},
		{"helm", "helm list --kubeconfig k.yaml", policy.Ask},
		{"quoted", `kubectl get pods "--kubeconfig=k.yaml"`, policy.Ask},
		{"the environment variable", "KUBECONFIG=evil.yaml kubectl get pods", policy.Ask},
		{"exported first", "export KUBECONFIG=./k.yaml; kubectl get pods", policy.Ask},
		{"through env", "env KUBECONFIG=k.yaml kubectl get pods", policy.Ask},
		{"another variable that ends alike", "MY_KUBECONFIG=x kubectl get pods", policy.Allow},
		{"kubectl get alone", "kubectl get pods -n default", policy.Allow},
		{"a context", "kubectl --context staging get pods", policy.Allow},
		{"an option that only starts alike", "kubectl get pods --kubeconfigs-are-fine", policy.Allow},
	} {
		if d := e.Evaluate(shellCall("bash", c.cmd)); d.Level != c.want {
			t.Errorf("%s: %q is %s (%s), want %s", c.note, c.cmd, d.Level, d.MatchedRule, c.want)
		}
	}
}
