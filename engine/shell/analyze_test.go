package shell

import (
	"slices"
	"strings"
	"testing"
)

const testHome = "/home/u"

// TestAnalyzeShellPaths checks docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm: paths are found in every simple
// command, substitution and redirect, with ~ and $HOME expanded and URLs left
// out.
func TestAnalyzeShellPaths(t *testing.T) {
	tests := []struct {
		note string
		cmd  string
		want []string
	}{
		{note: "after &&", cmd: "echo hi && cat /etc/passwd", want: []string{"/etc/passwd"}},
		{note: "tilde", cmd: "cat ~/.ssh/id_rsa", want: []string{"/home/u/.ssh/id_rsa"}},
		{note: "$HOME", cmd: "cat $HOME/.aws/credentials", want: []string{"/home/u/.aws/credentials"}},
		{note: "${HOME} in double quotes", cmd: `cat "${HOME}/.netrc"`, want: []string{"/home/u/.netrc"}},
		{note: "bare ~", cmd: "ls ~", want: []string{"/home/u"}},
		{note: "bare ${HOME} is no path (reference s11-c3-20)", cmd: `echo ${HOME} "$HOME"`, want: nil},
		// Another user's home is not known statically : unknown.
		{note: "other user's home", cmd: "cat ~root/.bashrc", want: []string{"\x00//.bashrc"}},
		{note: "command substitution", cmd: "ls $(cat /etc/shadow)", want: []string{"/etc/shadow"}},
		{note: "backticks", cmd: "echo `cat /etc/shadow`", want: []string{"/etc/shadow"}},
		{note: "nested substitution", cmd: `echo "$(dirname "$(cat /etc/hostname)")"`, want: []string{"/etc/hostname"}},
		{note: "redirect target", cmd: "echo x > /etc/hosts", want: []string{"/etc/hosts"}},
		{note: "append redirect and input", cmd: "sort < /var/log/syslog >> ./out.txt", want: []string{"/var/log/syslog", "./out.txt"}},
		{note: "cd then relative", cmd: "cd /tmp && rm -rf .", want: []string{"/tmp", "."}},
		{note: "process substitution", cmd: "diff <(cat /etc/passwd) <(cat ./users.txt)", want: []string{"/etc/passwd", "./users.txt"}},
		{note: "output process substitution", cmd: "tee >(gzip > /tmp/log.gz) < in.txt", want: []string{"/tmp/log.gz"}},
		{note: "relative only", cmd: "git checkout origin/main", want: []string{"origin/main"}},
		{note: "URL is not a path", cmd: "curl https://example.com/a/b", want: nil},
		{note: "URL and output file", cmd: "curl -o /tmp/x.sh https://example.com/x.sh", want: []string{"/tmp/x.sh"}},
		{note: "assignment value", cmd: "FOO=/etc/ssl/key.pem make build", want: []string{"/etc/ssl/key.pem"}},
		{note: "bare assignment", cmd: "KEY=~/.ssh/id_ed25519; cat $KEY", want: []string{"/home/u/.ssh/id_ed25519"}},
		{note: "export", cmd: "export KUBECONFIG=/etc/k8s/admin.conf", want: []string{"/etc/k8s/admin.conf"}},
		{note: "option with =", cmd: "go test --coverprofile=/tmp/c.out ./...", want: []string{"/tmp/c.out", "./..."}},
		{note: "attached short option", cmd: "gcc -I./include -L../lib -o/tmp/a.out main.c", want: []string{"./include", "../lib", "/tmp/a.out"}},
		{note: "single quotes", cmd: `cat '/etc/my file'`, want: []string{"/etc/my file"}},
		{note: "escaped space", cmd: `cat /etc/my\ file`, want: []string{"/etc/my file"}},
		{note: "pipeline and semicolon", cmd: "ls; cat /etc/group | grep x", want: []string{"/etc/group"}},
		{note: "background and newline", cmd: "sleep 1 &\ncat /root/.profile", want: []string{"/root/.profile"}},
		{note: "subshell and braces", cmd: "(cd /opt && ls) ; { cat /srv/a; }", want: []string{"/opt", "/srv/a"}},
		{note: "if and for", cmd: "if [ -f /etc/x ]; then for f in /var/*; do echo $f; done; fi", want: []string{"/etc/x", "/var/*"}},
		{note: "here-document body is data", cmd: "cat <<EOF > ./notes\n/etc/passwd\nEOF", want: []string{"./notes"}},
		// CONF comes from the environment: an unknown path too.
		{note: "parameter default", cmd: "cat ${CONF:-/etc/app.conf}", want: []string{"/etc/app.conf", "\x00"}},
		{note: "sudo", cmd: "sudo tee /etc/sudoers.d/x", want: []string{"/etc/sudoers.d/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			got := Analyze(tt.cmd, testHome)
			if !got.Parsed {
				t.Errorf("Analyze(%q).Parsed = false, want true", tt.cmd)
			}
			if !slices.Equal(got.Paths, tt.want) {
				t.Errorf("Analyze(%q).Paths = %q, want %q", tt.cmd, got.Paths, tt.want)
			}
		})
	}
}

// TestAnalyzeShellCommands checks that every simple command is found, with
// quotes removed.
func TestAnalyzeShellCommands(t *testing.T) {
	tests := []struct {
		note string
		cmd  string
		want [][]string
	}{
		{note: "one command", cmd: "git status", want: [][]string{{"git", "status"}}},
		{note: "and list", cmd: "echo hi && cat /etc/passwd", want: [][]string{{"echo", "hi"}, {"cat", "/etc/passwd"}}},
		{note: "quotes removed", cmd: `git commit -m "fix: it's done"`, want: [][]string{{"git", "commit", "-m", "fix: it's done"}}},
		// The substitution runs first; its output is unknown.
		{note: "substitution inside", cmd: "ls $(cat /etc/shadow)", want: [][]string{{"cat", "/etc/shadow"}, {"ls", "\x00"}}},
		{note: "five parts", cmd: "cd /tmp; make && ./run | tee log || echo fail",
			want: [][]string{{"cd", "/tmp"}, {"make"}, {"./run"}, {"tee", "log"}, {"echo", "fail"}}},
		{note: "declaration", cmd: "export A=1 B=/x", want: [][]string{{"export", "A=1", "B=/x"}}},
		{note: "HOME expanded in words", cmd: "ls $HOME", want: [][]string{{"ls", "/home/u"}}},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			got := Analyze(tt.cmd, testHome)
			if !slices.EqualFunc(got.Commands, tt.want, slices.Equal) {
				t.Errorf("Analyze(%q).Commands = %q, want %q", tt.cmd, got.Commands, tt.want)
			}
		})
	}
}

// TestAnalyzeShellWindows checks that Windows command text keeps its
// backslash paths, and that a backslash that changes the script's structure
// is not allowed to hide a command.
func TestAnalyzeShellWindows(t *testing.T) {
	tests := []struct {
		note string
		cmd  string
		want []string
	}{
		// Both readings are kept whenever they differ.
		{note: "drive letter path", cmd: `type C:\Users\me\a.txt`, want: []string{"C:/Users/me/a.txt", "C:Usersmea.txt"}},
		{note: "quoted with spaces", cmd: `Get-Content "C:\Program Files\app\config.ini"`, want: []string{"C:/Program Files/app/config.ini", `C:\Program Files\app\config.ini`}},
		{note: "relative dot backslash", cmd: `.\scripts\build.ps1 -Out ..\dist`, want: []string{"./scripts/build.ps1", "../dist"}},
		{note: "UNC path", cmd: `copy \\server\share\f.txt D:\in`, want: []string{"//server/share/f.txt", "D:/in", `\serversharef.txt`, "D:in"}},
		{note: "forward slashes", cmd: `type C:/Users/me/a.txt`, want: []string{"C:/Users/me/a.txt"}},
		{note: "drive then chain", cmd: `dir C:\ && type D:\secret.txt`, want: []string{"C:/", "D:/secret.txt", "C: ", "D:secret.txt"}},
		{note: "POSIX escapes untouched", cmd: `find . -name '*.go' -exec rm {} \;`, want: []string{"."}},
		{note: "POSIX escaped quote", cmd: `echo \"hi\" > ./x`, want: []string{"./x"}},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			got := Analyze(tt.cmd, testHome)
			if !slices.Equal(got.Paths, tt.want) {
				t.Errorf("Analyze(%q).Paths = %q, want %q", tt.cmd, got.Paths, tt.want)
			}
		})
	}
	// Read as bash, `C:\"` escapes the quote and `cat /etc/shadow` runs; the
	// slashed copy reads one quoted word. Both readings must be reported.
	hidden := `echo C:\"; cat /etc/shadow; echo \"`
	got := Analyze(hidden, testHome)
	if !slices.Contains(got.Paths, "/etc/shadow") {
		t.Errorf("Analyze(%q).Paths = %q, want it to contain /etc/shadow", hidden, got.Paths)
	}
	if !slices.ContainsFunc(got.Commands, func(c []string) bool { return slices.Equal(c, []string{"cat", "/etc/shadow"}) }) {
		t.Errorf("Analyze(%q).Commands = %q, want it to contain [cat /etc/shadow]", hidden, got.Commands)
	}
}

// TestAnalyzeShellUnparsable checks that a script that does not parse is
// marked risky and still scanned.
func TestAnalyzeShellUnparsable(t *testing.T) {
	tests := []struct {
		note string
		cmd  string
		want string
	}{
		{note: "unterminated quote", cmd: `cat /etc/passwd "oops`, want: "/etc/passwd"},
		{note: "unbalanced paren", cmd: `echo $(cat /etc/shadow`, want: "/etc/shadow"},
		{note: "bad if", cmd: `if then cat ~/.ssh/id_rsa fi; fi`, want: "/home/u/.ssh/id_rsa"},
		{note: "too large", cmd: "cat /etc/hosts " + strings.Repeat("a ", maxParseBytes), want: "/etc/hosts"},
		{note: "too deep", cmd: strings.Repeat("$(", 300) + "cat /etc/hosts" + strings.Repeat(")", 300), want: "/etc/hosts"},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			got := Analyze(tt.cmd, testHome)
			if got.Parsed {
				t.Errorf("Analyze(%.40q...).Parsed = true, want false", tt.cmd)
			}
			if !slices.Contains(got.Paths, tt.want) {
				t.Errorf("Analyze(%.40q...).Paths = %.200q, want it to contain %q", tt.cmd, got.Paths, tt.want)
			}
		})
	}
}

// TestPathWord checks the judgement of single words, which the engine's
// fast path uses alone.
func TestPathWord(t *testing.T) {
	tests := []struct {
		note   string
		word   string
		want   string
		wantOK bool
	}{
		{note: "absolute", word: "/etc/passwd", want: "/etc/passwd", wantOK: true},
		{note: "plain word", word: "status", wantOK: false},
		{note: "flag", word: "-rf", wantOK: false},
		{note: "dot", word: ".", want: ".", wantOK: true},
		{note: "URL", word: "https://example.com/x", wantOK: false},
		{note: "tilde", word: "~/.bashrc", want: "/home/u/.bashrc", wantOK: true},
		{note: "${HOME}", word: "${HOME}/x", want: "/home/u/x", wantOK: true},
		{note: "bare $HOME", word: "$HOME", wantOK: false},
		{note: "other user", word: "~alice/.ssh", want: "/home/alice/.ssh", wantOK: true},
		{note: "long option", word: "--config=/etc/app.yaml", want: "/etc/app.yaml", wantOK: true},
		{note: "attached relative", word: "-I../include", want: "../include", wantOK: true},
		{note: "env assignment", word: "GOPATH=/opt/go", want: "/opt/go", wantOK: true},
		{note: "drive letter", word: `C:\x`, want: `C:\x`, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			got, ok := PathWord(tt.word, testHome)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("PathWord(%q) = %q, %v; want %q, %v", tt.word, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestNeedsFullParse checks the fast-path test: plain words only.
func TestNeedsFullParse(t *testing.T) {
	tests := []struct {
		note string
		cmd  string
		want bool
	}{
		{note: "git status", cmd: "git status", want: false},
		{note: "flags and paths", cmd: "go test -run=TestX -count=1 ./engine/...", want: false},
		{note: "url", cmd: "curl -sS https://example.com/a?b", want: true},
		{note: "email and plus", cmd: "git config user.email a+b@x.org", want: false},
		{note: "quote", cmd: `git commit -m "x"`, want: true},
		{note: "dollar", cmd: "echo $HOME", want: true},
		{note: "tilde", cmd: "ls ~", want: true},
		{note: "and", cmd: "make && make test", want: true},
		{note: "semicolon", cmd: "ls; pwd", want: true},
		{note: "redirect", cmd: "ls > x", want: true},
		{note: "glob", cmd: "ls *.go", want: true},
		{note: "braces", cmd: "echo {a,b}", want: true},
		{note: "backslash", cmd: `type C:\x`, want: true},
		{note: "newline", cmd: "ls\npwd", want: true},
		{note: "tab", cmd: "ls\t-la", want: true},
		{note: "hash", cmd: "ls # comment", want: true},
		{note: "empty", cmd: "", want: false},
		// plain text whose normalized form differs, or whose
		// first word is a wrapper, is analysed in full.
		{note: "plain ls stays fast", cmd: "ls -la src", want: false},
		{note: "wrapper", cmd: "nice -n 5 rm -rf /", want: true},
		{note: "sudo", cmd: "sudo halt", want: true},
		{note: "program path", cmd: "/bin/rm -rf /", want: true},
		{note: "assignment prefix", cmd: "GOOS=linux go build", want: true},
		{note: "two spaces", cmd: "git  push", want: true},
		{note: "cd", cmd: "cd etc", want: true},
		{note: "eval", cmd: "eval rm -rf /", want: true},
		{note: "double slash", cmd: "rm -rf //", want: true},
		{note: "dot segment", cmd: "cat /etc/./shadow", want: true},
		{note: "trailing slash", cmd: "rm -rf /etc/", want: true},
		{note: "dotdot", cmd: "cat src/../x", want: true},
		{note: "clean paths stay fast", cmd: "cat src/a.go ./b /etc/hosts .hidden/x", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			if got := NeedsFullParse(tt.cmd); got != tt.want {
				t.Errorf("NeedsFullParse(%q) = %v, want %v", tt.cmd, got, tt.want)
			}
		})
	}
}

// TestFastPathAgreesWithParser checks that, for plain commands, splitting on
// spaces and calling PathWord finds what the parser finds.
func TestFastPathAgreesWithParser(t *testing.T) {
	for _, cmd := range []string{
		"git status",
		"git checkout origin/main",
		"ls -la /etc",
		"go test -coverprofile=/tmp/c.out ./...",
		"cp a.txt ../b.txt",
		"kubectl get pods -n kube-system",
		"scp user@host:/etc/passwd .",
	} {
		if NeedsFullParse(cmd) {
			t.Fatalf("NeedsFullParse(%q) = true, want false", cmd)
		}
		var fast []string
		for _, w := range strings.Fields(cmd) {
			if p, ok := PathWord(w, testHome); ok {
				fast = append(fast, p)
			}
		}
		if got := Analyze(cmd, testHome).Paths; !slices.Equal(got, fast) {
			t.Errorf("%q: parser paths %q, fast path %q", cmd, got, fast)
		}
	}
}

// TestNormalizedFromCommandText: a normalized command that reads as a part
// of its command's text is that text; one that does not (a program by its
// base name, words written apart or quoted) is joined anew, with the same
// result either way.
func TestNormalizedFromCommandText(t *testing.T) {
	for _, c := range []struct {
		note, cmd string
		want      []string
	}{
		{"two commands as written", "make deploy --fast && git status", []string{"make deploy --fast", "git status"}},
		{"a wrapper and the command at its end", "sudo rm -rf /tmp/x", []string{"sudo rm -rf /tmp/x", "rm -rf /tmp/x"}},
		{"a program by its base name", "/bin/rm -rf x", []string{"rm -rf x"}},
		{"words written apart", "echo   a    b", []string{"echo a b"}},
		{"quoted words", `git commit -m "a  b"`, []string{"git commit -m a  b"}},
		{"a word with a prefix of the next", "ls lsx ls", []string{"ls lsx ls"}},
	} {
		if got := Analyze(c.cmd, "/home/u").Normalized; !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.note, got, c.want)
		}
	}
}
