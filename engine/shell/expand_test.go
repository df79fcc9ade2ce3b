package shell

import (
	"slices"
	"strings"
	"testing"
)

// testEnv is the environment of the expansion tests: the server user u,
// whose home is /home/u, running in /ws/p.
var testEnv = Env{Home: "/home/u", Dir: "/ws/p"}

// shown writes UnknownMark as <?> in failure messages.
func shown(v any) string {
	var b strings.Builder
	switch v := v.(type) {
	case []string:
		b.WriteString("[")
		for i, s := range v {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(s)
		}
		b.WriteString("]")
	case string:
		b.WriteString(v)
	}
	return strings.ReplaceAll(b.String(), UnknownMark, "<?>")
}

// TestShellExpansion checks that each word is expanded as bash expands it
// statically: the first normalized command is
// the expanded words, and the paths are what the expansion names.
func TestShellExpansion(t *testing.T) {
	const u = UnknownMark
	tests := []struct {
		note  string
		cmd   string
		want  string   // the first normalized command
		paths []string // nil: no path
	}{
		{note: "unset variable before a path is unknown, not dropped", cmd: "cat $X/etc/shadow", want: "cat " + u + "/etc/shadow", paths: []string{u + "/etc/shadow"}},
		{note: "unset variable before a glob", cmd: "rm -rf $X/*", want: "rm -rf " + u + "/*", paths: []string{u + "/*"}},
		{note: "two unset prefixes", cmd: "cp $X/dev/zero ${Y}/dev/sdb", want: "cp " + u + "/dev/zero " + u + "/dev/sdb", paths: []string{u + "/dev/zero", u + "/dev/sdb"}},
		{note: "$PWD is the working directory", cmd: "cat $PWD/../../etc/x", want: "cat /ws/p/../../etc/x", paths: []string{"/ws/p/../../etc/x"}},
		{note: "${PWD} in double quotes", cmd: `cat "${PWD}/a"`, want: "cat /ws/p/a", paths: []string{"/ws/p/a"}},
		{note: "brace list", cmd: "cat {/etc,/nope}/shadow", want: "cat /etc/shadow /nope/shadow", paths: []string{"/etc/shadow", "/nope/shadow"}},
		{note: "brace sequence", cmd: "touch f{1..3}", want: "touch f1 f2 f3"},
		{note: "brace after tilde", cmd: "rm -rf ~/{a,..}", want: "rm -rf /home/u/a /home/u/..", paths: []string{"/home/u/a", "/home/u/.."}},
		{note: "tilde inside a brace list", cmd: "rm -rf {~,x}", want: "rm -rf /home/u x", paths: []string{"/home/u"}},
		{note: "empty brace alternative gives no word", cmd: "{rm,} -rf /", want: "rm -rf /", paths: []string{"/"}},
		{note: "backup idiom", cmd: "cp a.go{,.bak}", want: "cp a.go a.go.bak"},
		{note: "~", cmd: "ls ~", want: "ls /home/u", paths: []string{"/home/u"}},
		{note: "~/x", cmd: "cat ~/.ssh/id_rsa", want: "cat /home/u/.ssh/id_rsa", paths: []string{"/home/u/.ssh/id_rsa"}},
		{note: "~user of the server user", cmd: "cat ~u/.netrc", want: "cat /home/u/.netrc", paths: []string{"/home/u/.netrc"}},
		{note: "~user of another user is unknown", cmd: "cat ~bob/x", want: "cat " + u + "//x", paths: []string{u + "//x"}},
		{note: "~+ is $PWD", cmd: "cat ~+/x", want: "cat /ws/p/x", paths: []string{"/ws/p/x"}},
		{note: "~- is $OLDPWD, unknown", cmd: "cat ~-/x", want: "cat " + u + "//x", paths: []string{u + "//x"}},
		{note: "quoted tilde is literal", cmd: "cat '~'/x", want: "cat ~/x", paths: []string{"~/x"}},
		{note: "$HOME/x", cmd: "cat $HOME/.aws/credentials", want: "cat /home/u/.aws/credentials", paths: []string{"/home/u/.aws/credentials"}},
		{note: "bare $HOME is no path (reference)", cmd: `echo "$HOME"`, want: "echo /home/u"},
		{note: "ANSI-C hex", cmd: `cat $'\x2fetc\x2fshadow'`, want: "cat /etc/shadow", paths: []string{"/etc/shadow"}},
		{note: "ANSI-C octal", cmd: `cat $'\057etc\057passwd'`, want: "cat /etc/passwd", paths: []string{"/etc/passwd"}},
		{note: "ANSI-C unicode", cmd: `cat $'\u002fetc/hosts'`, want: "cat /etc/hosts", paths: []string{"/etc/hosts"}},
		{note: "ANSI-C newline", cmd: `printf $'a\nb'`, want: "printf a\nb"},
		{note: "backslash before the name", cmd: `\rm -rf /`, want: "rm -rf /", paths: []string{"/"}},
		{note: "quoted name", cmd: `'rm' -rf /`, want: "rm -rf /", paths: []string{"/"}},
		{note: "empty quotes inside a name", cmd: `r''m -rf /`, want: "rm -rf /", paths: []string{"/"}},
		{note: "quotes inside a sensitive path", cmd: `cat ~/.gnu''pg/x`, want: "cat /home/u/.gnupg/x", paths: []string{"/home/u/.gnupg/x"}},
		{note: "escaped space", cmd: `cat /etc/my\ file`, want: "cat /etc/my file", paths: []string{"/etc/my file"}},
		{note: "double-quote escapes", cmd: `echo "a\$b\"c"`, want: `echo a$b"c`},
		{note: "assigned earlier", cmd: "FOO=/etc; cat $FOO/shadow", want: "cat /etc/shadow", paths: []string{"/etc", "/etc/shadow"}},
		{note: "export", cmd: `export D=/etc; cat "$D"/passwd`, want: "export D=/etc", paths: []string{"/etc", "/etc/passwd"}},
		{note: "declare", cmd: "declare D=/root; cat $D/.bashrc", want: "declare D=/root", paths: []string{"/root", "/root/.bashrc"}},
		{note: "readonly", cmd: "readonly D=/boot; ls $D", want: "readonly D=/boot", paths: []string{"/boot"}},
		{note: "append assignment", cmd: "P=/et; P+=c; cat $P/shadow", want: "cat /etc/shadow", paths: []string{"/et", "/etc/shadow"}},
		{note: "variable holding words is split", cmd: `X="rm -rf /"; $X`, want: "rm -rf /", paths: []string{"rm -rf /", "/"}},
		{note: "quoted variable is one word", cmd: `X="a b"; echo "$X"`, want: "echo a b"},
		{note: "default of an unknown variable is also a path", cmd: "cat ${CONF:-/etc/app.conf}", want: "cat " + u, paths: []string{"/etc/app.conf", u}},
		{note: "environment variable operand is an unknown path", cmd: "cat $HISTFILE", want: "cat " + u, paths: []string{u}},
		{note: "but not for echo (reference)", cmd: "echo $USER", want: "echo " + u},
		{note: "environment part before a name", cmd: `ls "$X"rootlink`, want: "ls " + u + "rootlink", paths: []string{u + "rootlink"}},
		{note: "environment part in an option is no path", cmd: "go build -ldflags=-X=$V", want: "go build -ldflags=-X=" + u},
		{note: "loop variable is no environment path", cmd: "for f in a b; do gofmt -l $f; done", want: "gofmt -l " + u},
		{note: "bare $HOME operand of ls is a path", cmd: "ls $HOME", want: "ls /home/u", paths: []string{"/home/u"}},
		{note: "cd alone goes home", cmd: "cd; cat .bashrc", want: "cd", paths: []string{"/home/u"}},
		{note: "unknown redirect target", cmd: "echo x > $F", want: "echo x", paths: []string{u}},
		{note: "default of a known variable", cmd: "X=/etc; cat ${X:-/nope}/shadow", want: "cat /etc/shadow", paths: []string{"/etc", "/etc/shadow"}},
		{note: "operator on a known value", cmd: "X=/etc/passwd.bak; cat ${X%.bak}", want: "cat /etc/passwd", paths: []string{"/etc/passwd.bak", "/etc/passwd"}},
		{note: "positional parameters are unknown", cmd: "rm -rf $1/x $@", want: "rm -rf " + u + "/x " + u, paths: []string{u + "/x"}},
		{note: "command substitution is unknown", cmd: "cat $(pwd)/x", want: "pwd", paths: []string{u + "/x"}},
		{note: "arithmetic is unknown", cmd: "a=$((1+2)); echo $a", want: "echo " + u},
		{note: "assignment in a condition leaves the variable unknown, and its value is one more reading", cmd: "if true; then X=/ws; fi; cat $X/s", want: "true", paths: []string{"/ws", u + "/s", "/ws/s"}},
		{note: "assignment in a loop is unknown in the whole loop", cmd: "X=/ws; while true; do cat $X/s; X=/etc; done", want: "true", paths: []string{"/ws", u + "/s", "/etc"}},
		{note: "function body sees no script variable", cmd: "f(){ cat $X/s; }; X=/ws; f", want: "cat " + u + "/s", paths: []string{u + "/s", "/ws"}},
		{note: "cd makes $PWD unknown", cmd: "cd /etc; cat $PWD/shadow", want: "cd /etc", paths: []string{"/etc", u + "/shadow"}},
		{note: "read assigns its names", cmd: "X=/ws; read X; cat $X/s", want: "read X", paths: []string{"/ws", u + "/s"}},
		{note: "eval may assign anything after it", cmd: "X=/ws; eval Y=1; cat $X/s", want: "eval Y=1", paths: []string{"/ws", u + "/s"}},
		{note: "an unknown command may be eval", cmd: "X=/ws; $C; cat $X/s", want: u, paths: []string{"/ws", u + "/s"}},
		{note: "globs stay text", cmd: "ls src/*.go", want: "ls src/*.go", paths: []string{"src/*.go"}},
		{note: "unknown word that is .. once empty", cmd: `rm -rf "$E"..`, want: "rm -rf " + u + "..", paths: []string{u + ".."}},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			a := AnalyzeEnv(tt.cmd, testEnv)
			if !a.Parsed {
				t.Fatalf("AnalyzeEnv(%q).Parsed = false", tt.cmd)
			}
			if len(a.Normalized) == 0 || a.Normalized[0] != tt.want {
				t.Errorf("AnalyzeEnv(%q).Normalized = %s, want it to start with %s", tt.cmd, shown(a.Normalized), shown(tt.want))
			}
			if !slices.Equal(a.Paths, tt.paths) {
				t.Errorf("AnalyzeEnv(%q).Paths = %s, want %s", tt.cmd, shown(a.Paths), shown(tt.paths))
			}
		})
	}
}

// TestShellUnknownCommand checks which commands have a name that cannot be
// known statically (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
func TestShellUnknownCommand(t *testing.T) {
	tests := []struct {
		note string
		cmd  string
		want bool
	}{
		{note: "variable as the name", cmd: "$CMD -rf /", want: true},
		{note: "substitution as the name", cmd: "$(echo rm) -rf /", want: true},
		{note: "$@ inside the name", cmd: "r$@m -rf /", want: true},
		{note: "known variable as the name", cmd: "C=ls; $C -la", want: false},
		{note: "pipe into sh", cmd: "cat x.sh | sh", want: true},
		{note: "echo of known text into sh is read", cmd: "echo ls | sh", want: false},
		{note: "pipe into bash -s", cmd: "curl -s x | bash -s -- -y", want: true},
		{note: "file into sh", cmd: "sh < script.sh", want: true},
		{note: "sh -c with unknown text", cmd: `sh -c "$PAYLOAD"`, want: true},
		{note: "eval of unknown text", cmd: "eval $(base64 -d <<< cm0=)", want: true},
		{note: "here-string to bash is read", cmd: `bash <<< "ls"`, want: false},
		{note: "plain command", cmd: "ls -la src", want: false},
		{note: "the marker itself (a command that is not text)", cmd: UnknownMark, want: true},
		{note: "a NUL byte in the text", cmd: "ls " + UnknownMark + "; rm x", want: true},
		{note: "unknown argument only", cmd: "ls $DIR", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			a := AnalyzeEnv(tt.cmd, testEnv)
			if a.UnknownCommand != tt.want {
				t.Errorf("AnalyzeEnv(%q).UnknownCommand = %v, want %v (normalized %s)", tt.cmd, a.UnknownCommand, tt.want, shown(a.Normalized))
			}
			if a.Opaque() != tt.want {
				t.Errorf("AnalyzeEnv(%q).Opaque() = %v, want %v", tt.cmd, a.Opaque(), tt.want)
			}
		})
	}
}

// TestShellReparse checks that script text given to another shell is read
// again, with its own paths, up to MaxReparseDepth.
func TestShellReparse(t *testing.T) {
	tests := []struct {
		note     string
		cmd      string
		wantNorm string
		wantPath string
	}{
		{note: "eval joins its arguments", cmd: "eval cat /etc/shadow", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "eval of quoted text", cmd: "eval 'rm -rf ~'", wantNorm: "rm -rf /home/u", wantPath: "/home/u"},
		{note: "sh -c", cmd: "sh -c 'cat /etc/shadow'", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "bash -lc cluster", cmd: "bash -lc 'rm -rf /'", wantNorm: "rm -rf /", wantPath: "/"},
		{note: "sh -c with $'..' payload", cmd: `sh -c $'rm\x20-rf\x20/'`, wantNorm: "rm -rf /", wantPath: "/"},
		{note: "bash -c with octal payload", cmd: `bash -c $'\143at /etc/passwd'`, wantNorm: "cat /etc/passwd", wantPath: "/etc/passwd"},
		{note: "dash -e -c", cmd: "dash -e -c 'cat /root/x'", wantNorm: "cat /root/x", wantPath: "/root/x"},
		{note: "zsh -c", cmd: "zsh -c 'cat /etc/shadow'", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "busybox sh -c", cmd: "busybox sh -c 'rm -rf /'", wantNorm: "rm -rf /", wantPath: "/"},
		{note: "su -c", cmd: "su -c 'cat /etc/shadow' root", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "su user -c", cmd: "su root -c 'cat /etc/shadow'", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "env -S", cmd: "env -S 'cat /etc/shadow'", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "env --split-string=", cmd: "env --split-string='cat /etc/shadow'", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "xargs sh -c", cmd: "xargs sh -c 'cat /etc/shadow'", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "find -exec sh -c", cmd: `find . -exec sh -c 'cat /etc/shadow' \;`, wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "script -c", cmd: "script -q -c 'cat /etc/shadow' /dev/null", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "flock -c", cmd: "flock /tmp/l -c 'cat /etc/shadow'", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "an assignment inside $(...) is known after it there", cmd: `echo $(V=cat; $V /etc/shadow)`, wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "and inside ( )", cmd: `(P=/etc; cat $P/shadow)`, wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "watch joins its arguments", cmd: "watch -n 1 cat /etc/shadow", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "trap text", cmd: "trap 'rm -rf /' EXIT", wantNorm: "rm -rf /", wantPath: "/"},
		{note: "here-string to bash", cmd: `bash <<< "rm -rf /"`, wantNorm: "rm -rf /", wantPath: "/"},
		{note: "echo piped into bash", cmd: "echo 'rm -rf /' | bash", wantNorm: "rm -rf /", wantPath: "/"},
		{note: "printf piped into sh", cmd: `printf 'cat /etc/shadow\n' | sh`, wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "here-document to sh", cmd: "sh <<EOF\ncat /etc/shadow\nEOF", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "an unknown program given -c may be a shell", cmd: "$SHELL -c 'cat /etc/shadow'", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "nested shells", cmd: `sh -c "bash -c 'eval cat /etc/shadow'"`, wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "exported variable reaches the child", cmd: "export D=/etc; sh -c 'cat $D/shadow'", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "env assignment reaches the child", cmd: "env D=/etc sh -c 'cat $D/shadow'", wantNorm: "cat /etc/shadow", wantPath: "/etc/shadow"},
		{note: "unexported variable does not", cmd: "D=/ws; sh -c 'cat $D/shadow'", wantNorm: "cat " + UnknownMark + "/shadow", wantPath: UnknownMark + "/shadow"},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			a := AnalyzeEnv(tt.cmd, testEnv)
			if !slices.Contains(a.Normalized, tt.wantNorm) {
				t.Errorf("AnalyzeEnv(%q).Normalized = %s, want it to hold %s", tt.cmd, shown(a.Normalized), shown(tt.wantNorm))
			}
			if !slices.Contains(a.Paths, tt.wantPath) {
				t.Errorf("AnalyzeEnv(%q).Paths = %s, want it to hold %s", tt.cmd, shown(a.Paths), shown(tt.wantPath))
			}
			if a.TooDeep || !a.Parsed {
				t.Errorf("AnalyzeEnv(%q): TooDeep %v, Parsed %v; want false, true", tt.cmd, a.TooDeep, a.Parsed)
			}
		})
	}
}

// TestShellReparseDepth checks the bound: text nested deeper than
// MaxReparseDepth shells is not read, and the analysis says so.
func TestShellReparseDepth(t *testing.T) {
	nest := func(n int) string {
		cmd := "cat /etc/shadow"
		for range n {
			cmd = "sh -c " + quoteForTest(cmd)
		}
		return cmd
	}
	for n := 1; n <= MaxReparseDepth+2; n++ {
		a := AnalyzeEnv(nest(n), testEnv)
		wantDeep := n > MaxReparseDepth
		if a.TooDeep != wantDeep {
			t.Errorf("%d nested shells: TooDeep = %v, want %v", n, a.TooDeep, wantDeep)
		}
		if got := slices.Contains(a.Normalized, "cat /etc/shadow"); got == wantDeep {
			t.Errorf("%d nested shells: cat /etc/shadow found = %v, want %v", n, got, !wantDeep)
		}
		if a.Opaque() != wantDeep {
			t.Errorf("%d nested shells: Opaque() = %v, want %v", n, a.Opaque(), wantDeep)
		}
	}
}

// TestCommandTextDepth checks the bound for text an unknown program is
// given (read as the command string such programs often run): nested at
// the bound or deeper inside it, the analysis is TooDeep, so that a denied
// command there is not lost.
func TestCommandTextDepth(t *testing.T) {
	nest := func(n int) string {
		cmd := "sudo reboot"
		for range n {
			cmd = "eval " + quoteForTest(cmd)
		}
		return cmd
	}
	tests := []struct {
		note string
		cmd  string
		deep bool
	}{
		{note: "read whole", cmd: "runner exec " + quoteForTest(nest(MaxReparseDepth-1)), deep: false},
		{note: "nested past the bound inside the text", cmd: "runner exec " + quoteForTest(nest(MaxReparseDepth)), deep: true},
		{note: "eval as deep as is read", cmd: nest(MaxReparseDepth) + " ; true", deep: false},
		{note: "text at the bound", cmd: func() string {
			cmd := "runner exec 'sudo reboot'"
			for range MaxReparseDepth {
				cmd = "eval " + quoteForTest(cmd)
			}
			return cmd
		}(), deep: true},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			a := AnalyzeEnv(tt.cmd, testEnv)
			if a.TooDeep != tt.deep {
				t.Errorf("%q: TooDeep = %v, want %v", tt.cmd, a.TooDeep, tt.deep)
			}
			if !tt.deep && !slices.Contains(a.Normalized, "sudo reboot") {
				t.Errorf("%q: sudo reboot not among %q", tt.cmd, a.Normalized)
			}
		})
	}
}

// quoteForTest single-quotes s for a shell.
func quoteForTest(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TestShellNormalized checks the normalized commands of docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm: the
// program by its base name, words joined by single spaces, one form per
// wrapper layer, the home as ~ and unknown parts as empty.
func TestShellNormalized(t *testing.T) {
	const u = UnknownMark
	tests := []struct {
		note string
		cmd  string
		want []string
	}{
		{note: "wrappers, path and quotes", cmd: "nice -n 5 sudo /bin/rm -rf '/'", want: []string{"nice -n 5 sudo /bin/rm -rf /", "sudo /bin/rm -rf /", "rm -rf /"}},
		{note: "two spaces", cmd: "git  push", want: []string{"git push"}},
		{note: "a tab", cmd: "git\tpush origin", want: []string{"git push origin"}},
		{note: "assignment prefix", cmd: "GIT_DIR=x git push", want: []string{"git push"}},
		{note: "home as ~", cmd: "rm -rf $HOME", want: []string{"rm -rf /home/u", "rm -rf ~"}},
		{note: "unknown parts empty", cmd: "rm -rf $X/*", want: []string{"rm -rf " + u + "/*", "rm -rf /*"}},
		{note: "unknown name dropped", cmd: "$E rm -rf /", want: []string{u + " rm -rf /", "rm -rf /"}},
		{note: "unknown part of a name", cmd: `"$E"sudo halt`, want: []string{u + "sudo halt", "sudo halt", "halt"}},
		{note: "command -v runs nothing", cmd: "command -v rm", want: []string{"command -v rm"}},
		{note: "every simple command", cmd: "cd src && make; ls | wc -l", want: []string{"cd src", "make", "ls", "wc -l"}},
		{note: "declaration", cmd: "export A=1", want: []string{"export A=1"}},
		{note: "time keyword", cmd: "time rm -rf /", want: []string{"time rm -rf /", "rm -rf /"}},
		{note: "paths cleaned", cmd: "rm -rf //home/./u/", want: []string{"rm -rf //home/./u/", "rm -rf /home/u", "rm -rf ~"}},
		{note: "assignment after && is known", cmd: "A=env && B=-S\n\"$A\" \"$B\" 'halt'", want: []string{"env -S halt", "halt"}},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			a := AnalyzeEnv(tt.cmd, testEnv)
			if !slices.Equal(a.Normalized, tt.want) {
				t.Errorf("AnalyzeEnv(%q).Normalized = %s, want %s", tt.cmd, shown(a.Normalized), shown(tt.want))
			}
			if len(a.Argv) != len(a.Normalized) {
				t.Fatalf("Argv has %d commands, Normalized %d", len(a.Argv), len(a.Normalized))
			}
			for i, argv := range a.Argv {
				if got := strings.Join(argv, " "); got != a.Normalized[i] {
					t.Errorf("Argv[%d] joined = %s, want Normalized[%d] = %s", i, shown(got), i, shown(a.Normalized[i]))
				}
			}
		})
	}
}
