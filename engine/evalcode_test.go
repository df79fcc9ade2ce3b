package engine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// evalCodeCases are commands where bash evaluates text as code outside
// $(...) as written: array subscripts and arithmetic, prompt and startup
// variables, exported functions, traps. Each runs git push in real bash.
var evalCodeCases = []struct {
	note, cmd string
	want      policy.Level
}{
	{"test -v subscript", `test -v 'a[$(git push origin main)]'`, policy.Deny},
	{"[ -v subscript", `[ -v 'a[$(git push origin main)]' ]`, policy.Deny},
	{"[[ -v subscript", `[[ -v a[$(git push origin main)] ]]`, policy.Deny},
	{"[[ -v quoted subscript", `[[ -v 'a[$(git push origin main)]' ]]`, policy.Deny},
	{"(( )) subscript", `(( a[$(git push origin main)] ))`, policy.Deny},
	{"$(( )) subscript", `echo $(( a[$(git push origin main)] ))`, policy.Deny},
	{"arithmetic on a variable's text", `x='a[$(git push origin main)]'; echo $(( x ))`, policy.Deny},
	{"let", `let 'a[$(git push origin main)]=1'`, policy.Deny},
	{"declare target", `declare 'a[$(git push origin main)]=1'`, policy.Deny},
	{"declare -i value", `declare -i n='a[$(git push origin main)]'`, policy.Deny},
	{"printf -v target", `printf -v 'a[$(git push origin main)]' x`, policy.Deny},
	{"read target", `read 'a[$(git push origin main)]' <<< x`, policy.Deny},
	{"$'..' escapes", `test -v $'a[\x24(git push origin main)]'`, policy.Deny},
	{"$'..' octal escapes", `test -v $'a[\044(git push origin main)]'`, policy.Deny},
	{"PS4 with set -x", `PS4='$(git push origin main)'; set -x; true`, policy.Deny},
	{"PS4 for a child bash -x", `PS4='$(git push origin main)' bash -xc :`, policy.Deny},
	{"BASH_ENV", `BASH_ENV=<(echo git push origin main) bash -c :`, policy.Ask},
	{"ENV for an interactive sh", `ENV=<(echo git push origin main) sh -i -c : </dev/null`, policy.Ask},
	{"exported function", `env 'BASH_FUNC_true%%=() { git push origin main; }' bash -c true`, policy.Deny},
	{"PROMPT_COMMAND", `PROMPT_COMMAND='git push origin main' bash -i </dev/null`, policy.Deny},
	{"trap", `trap 'git push origin main' EXIT`, policy.Deny},
	{"coproc", `coproc git push origin main; wait`, policy.Deny},
}

// TestCodeInDataIsRead: every command of evalCodeCases runs git push in
// real bash (a stand-in git records it), and meets the git push deny rule;
// where the code is the content of a file a shell sources (BASH_ENV, ENV),
// which the analysis does not read, it asks.
func TestCodeInDataIsRead(t *testing.T) {
	e := launchPolicy(t)
	bash, err := exec.LookPath("bash")
	dir := t.TempDir()
	record := filepath.Join(dir, "ran")
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte("#!/bin/sh\necho \"$*\" >> "+record+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range evalCodeCases {
		// bash ignores PS4 from its environment when it runs as root.
		rootPS4 := os.Geteuid() == 0 && strings.Contains(c.cmd, "' bash -xc")
		if err == nil && !rootPS4 {
			os.Remove(record)
			cmd := exec.Command(bash, "-c", c.cmd)
			cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "HOME="+dir)
			cmd.Dir = dir
			_ = cmd.Run()
			if got, _ := os.ReadFile(record); !strings.Contains(string(got), "push origin main") {
				t.Errorf("%s: in bash, %q did not run git push (%q)", c.note, c.cmd, got)
			}
		}
		if d := decideShell(e, c.cmd); d.Level != c.want {
			t.Errorf("%s: %q is %s (%s), want %s", c.note, c.cmd, d.Level, d.MatchedRule, c.want)
		}
	}
}

// TestCodeInDataBenign: the same builtins used ordinarily stay allowed.
func TestCodeInDataBenign(t *testing.T) {
	e := launchPolicy(t)
	for _, cmd := range []string{
		`test -v HOME`,
		`[[ -v PATH ]]`,
		`[[ -v a[1] ]]`,
		`let i=1+2`,
		`declare -i n=5`,
		`declare -a list=(a b)`,
		`printf -v stamp '%s' hello`,
		`read -r line`,
		`let 'n = n * 2'`,
		`export PS1='\u@\h \w$ '`,
		`PS4='+ ' bash -x build.sh`,
		`unset 'arr[2]'`,
		`env FOO=1 BAR=2 make test`,
	} {
		if d := decideShell(e, cmd); d.Level != policy.Allow {
			t.Errorf("%q is %s (%s), want allow", cmd, d.Level, d.MatchedRule)
		}
	}
}
