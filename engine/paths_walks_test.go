package engine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// walkPolicy allows every shell command and asks about paths outside the
// workspace: a call that reads through a link out of it must ask.
func walkPolicy(t *testing.T, workspace string) *engine.Engine {
	t.Helper()
	perms := map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "ask"}, "tools": map[string]any{"bash": "allow"},
		"external_directory": map[string]any{"*": "ask"}}
	e, problems := engine.Compile(perms, nil, engine.Options{Workspace: workspace, HomeDir: "/home/u"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return e
}

// TestLinkFollowingWalksAsk: a walk told to follow the links below the
// directories it is given reads what they lead to, which the analysis
// cannot see, so it asks; the same walk without that option (which does
// not follow them) stays allowed, as do options that only look alike.
func TestLinkFollowingWalksAsk(t *testing.T) {
	e := walkPolicy(t, "/ws")
	cases := []struct {
		note, cmd string
		want      policy.Level
	}{
		{"grep -R follows every link", "grep -R password .", policy.Ask},
		{"grep -R in a cluster", "grep -rnR password src", policy.Ask},
		{"grep's long form", "grep --dereference-recursive password", policy.Ask},
		{"grep -r follows only the links named on the command line", "grep -r password .", policy.Allow},
		{"grep -L lists files without a match", "grep -rL password .", policy.Allow},
		{"after -- a word is an operand", "grep -r -- -R .", policy.Allow},
		{"quoted, so parsed rather than read plain", "grep -R 'pass word' .", policy.Ask},
		{"through a wrapper", "nice -n 5 grep -R password .", policy.Ask},
		{"after another command", "cd src && grep -R password", policy.Ask},
		{"egrep", "egrep -R 'a|b' .", policy.Ask},
		{"rg -L", "rg -L password", policy.Ask},
		{"rg --follow", "rg --follow password .", policy.Ask},
		{"rg does not follow by default", "rg password", policy.Allow},
		{"fd -L", "fd -L secret", policy.Ask},
		{"ag -f", "ag -f password", policy.Ask},
		{"ack --follow", "ack --follow password", policy.Ask},
		{"find -L", "find -L . -name id_rsa", policy.Ask},
		{"find -follow", "find . -follow -name id_rsa", policy.Ask},
		{"find alone", "find . -name id_rsa", policy.Allow},
		{"ls -RL", "ls -RL", policy.Ask},
		{"ls -lR", "ls -lR src", policy.Allow},
		{"du -L", "du -L -s .", policy.Ask},
		{"du --dereference", "du --dereference -a", policy.Ask},
		{"du -sh", "du -sh .", policy.Allow},
		{"tree -l", "tree -al", policy.Ask},
		{"tree -L is a depth", "tree -L 2", policy.Allow},
		{"cp -rL copies what links lead to", "cp -rL src backup", policy.Ask},
		{"cp -r copies links as links", "cp -r src backup", policy.Allow},
		{"rsync -L", "rsync -aL src/ backup/", policy.Ask},
		{"rsync -k", "rsync -ak src/ backup/", policy.Ask},
		{"rsync -a keeps links", "rsync -a src/ backup/", policy.Allow},
		{"tar -h", "tar -chf out.tar src", policy.Ask},
		{"tar's old style", "tar chf out.tar src", policy.Ask},
		{"tar --dereference", "tar --dereference -cf out.tar src", policy.Ask},
		{"tar stores links as links", "tar -cf out.tar src", policy.Allow},
		{"zip -r follows links by default", "zip -r out.zip src", policy.Ask},
		{"zip -ry stores them as links", "zip -ry out.zip src", policy.Allow},
		{"zip --symlinks", "zip -r --symlinks out.zip src", policy.Allow},
		{"zip without recursion", "zip out.zip a.txt", policy.Allow},
		{"chmod -R -L", "chmod -R -L g+w src", policy.Ask},
		{"chmod -R", "chmod -R g+w src", policy.Allow},
		{"chown -RL", "chown -RL me src", policy.Ask},
		{"a program that does not walk", "cat -L x", policy.Allow},
		// Other spellings of the same walks.
		{"an abbreviated long option (GNU getopt takes it)", "grep --dereference-rec password .", policy.Ask},
		{"du --deref", "du --deref -s .", policy.Ask},
		{"ls --deref", "ls --deref -R", policy.Ask},
		{"cp --deref", "cp -r --deref src backup", policy.Ask},
		{"rg --fol", "rg --fol password", policy.Ask},
		{"the program by its full path", "/usr/bin/grep -R password .", policy.Ask},
		{"a Windows executable suffix", "grep.exe -R password .", policy.Ask},
		{"through env", "env LC_ALL=C grep -R password .", policy.Ask},
		{"an assignment before it", "LC_ALL=C grep -R password .", policy.Ask},
		{"through sudo", "sudo grep -R password .", policy.Ask},
		{"launched by find -exec", "find . -name '*.go' -exec grep -R password {} +", policy.Ask},
		{"the letter quoted", `grep -"R" password .`, policy.Ask},
		{"ANSI-C quoting", `grep $'-R' password .`, policy.Ask},
		{"brace expansion", "grep -{R,r} password .", policy.Ask},
		{"a separate -h after tar's mode", "tar -c -h -f out.tar src", policy.Ask},
		{"gtar", "gtar chf out.tar src", policy.Ask},
		{"zip -y after --, a file name", "zip -r out.zip -- -y", policy.Ask},
		{"zip --symlinks abbreviated", "zip -r --sym out.zip src", policy.Allow},
		{"ls --dereference-command-line follows only the links named", "ls -R --dereference-command-line src", policy.Allow},
	}
	for _, c := range cases {
		d := decideShell(e, c.cmd)
		if d.Level != c.want {
			t.Errorf("%s: %q is %s (%s), want %s", c.note, c.cmd, d.Level, d.MatchedRule, c.want)
		}
		if c.want == policy.Ask && !strings.Contains(strings.Join(d.ExternalPaths, " "), "links") {
			t.Errorf("%s: %q lists %q as its outside paths, want the links it follows", c.note, c.cmd, d.ExternalPaths)
		}
	}
}

// TestLinkFollowingWalksReallyFollow runs, in real bash on this host, each
// walk whose program is here, with and without the option that makes it
// follow links, in a workspace holding a link to a directory outside it
// with a canary file: the option does reach the canary (which is why the
// call asks) and the plain walk does not (which is why it may be allowed).
func TestLinkFollowingWalksReallyFollow(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	ws, outside := t.TempDir(), t.TempDir()
	const canary = "toolgate-canary-7f3a"
	if err := os.WriteFile(filepath.Join(outside, canary+".txt"), []byte(canary+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "src"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "src", "out")); err != nil {
		t.Fatal(err)
	}
	e := walkPolicy(t, ws)
	// reached reports whether a command's output (after its setup) names
	// the canary.
	reached := func(cmd string) bool {
		run := exec.Command(bash, "-c", cmd)
		run.Dir = ws
		out, _ := run.CombinedOutput()
		return strings.Contains(string(out), canary)
	}
	checked := 0
	for _, c := range []struct {
		program, follows, plain string
		// check lists what the command made, when its output does not.
		check string
	}{
		{"grep", "grep -R " + canary + " .", "grep -r " + canary + " .", ""},
		{"find", "find -L . -name '" + canary + "*'", "find . -name '" + canary + "*'", ""},
		{"find", "find . -follow -name '" + canary + "*'", "find . -name '" + canary + "*'", ""},
		{"ls", "ls -RL", "ls -R", ""},
		{"du", "du -L -a .", "du -a .", ""},
		{"tar", "tar -chf a.tar src", "tar -cf b.tar src", "; tar -tvf %s.tar"},
		{"zip", "zip -qr a.zip src", "zip -qry b.zip src", "; unzip -l %s.zip"},
		{"cp", "cp -rL src copy-a", "cp -r src copy-b", "; find copy-%s -type f"},
	} {
		if _, err := exec.LookPath(c.program); err != nil {
			continue
		}
		if _, err := exec.LookPath("unzip"); err != nil && c.program == "zip" {
			continue
		}
		follows, plain := c.follows, c.plain
		if c.check != "" {
			follows += strings.ReplaceAll(c.check, "%s", "a")
			plain += strings.ReplaceAll(c.check, "%s", "b")
		}
		if !reached(follows) {
			t.Errorf("%q did not reach the canary behind the link", c.follows)
			continue
		}
		if reached(plain) {
			t.Errorf("%q reached the canary behind the link, so its walk follows links too", c.plain)
		}
		checked++
		if d := decideShell(e, c.follows); d.Level != policy.Ask {
			t.Errorf("%q reads what the link leads to but is %s (%s)", c.follows, d.Level, d.MatchedRule)
		}
		if d := decideShell(e, c.plain); d.Level != policy.Allow {
			t.Errorf("%q does not follow the link but is %s (%s)", c.plain, d.Level, d.MatchedRule)
		}
	}
	if checked < 4 {
		t.Errorf("only %d walks checked on this host", checked)
	}
}
