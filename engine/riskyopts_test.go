package engine

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestRiskyOption: options that write files or run programs are found, in
// their bundled, attached, abbreviated and = forms; the read-only uses of
// the same programs are not.
func TestRiskyOption(t *testing.T) {
	for _, tc := range []struct {
		note string
		argv string // split on spaces; use \x00 for a space inside a word
		want string // the option reported, "" for none
	}{
		// git
		{"git log writes with --output=", "git log --output=/tmp/x", "--output"},
		{"git log --output with a separate value", "git log -p --output /tmp/x", "--output"},
		{"git diff abbreviated --outp", "git diff --outp=x.txt", "--outp"},
		{"git diff --ext-diff", "git diff --ext-diff HEAD~1", "--ext-diff"},
		{"git show --textconv", "git show --textconv HEAD:a.bin", "--textconv"},
		{"git -c sets a pager", "git -c core.pager=sh\x00-c\x00id log", "-c"},
		{"git -c attached", "git -ccore.pager=id log", "-c"},
		{"git --config-env", "git --config-env=core.pager=X log", "--config-env"},
		{"git --exec-path=dir", "git --exec-path=/tmp/evil status", "--exec-path"},
		{"git -C dir then -c", "git -C sub -c alias.x=!id x", "-c"},
		{"git grep -O runs a pager", "git grep -Ovim foo", "-Ovim"},
		{"git grep --open-files-in-pager", "git grep --open-files-in-pager=sh foo", "--open-files-in-pager"},
		{"git format-patch -o", "git format-patch -o /tmp/p HEAD~3", "-o"},
		{"git fetch --upload-pack", "git fetch --upload-pack=touch\x00x origin", "--upload-pack"},
		{"git clone -u", "git clone -u evil https://x/y", "-u"},
		{"git clone --template", "git clone --template=/tmp/hooks https://x/y", "--template"},
		{"git archive -o", "git archive -o /tmp/a.zip HEAD", "-o"},
		{"git rebase -x", "git rebase -x make HEAD~2", "-x"},
		{"git bisect run", "git bisect run ./t.sh", "bisect run"},
		{"git submodule foreach", "git submodule foreach rm -rf .", "submodule foreach"},
		{"git cat-file --filters", "git cat-file --filters HEAD:x", "--filters"},
		{"git log read-only", "git log --oneline -n 20 --stat", ""},
		{"git log -c is combined diff, not config", "git log -c -p", ""},
		{"git diff --text is not --textconv", "git diff --text a b", ""},
		{"git diff --output-indicator-new is not --output", "git diff --output-indicator-new=+", ""},
		{"git -C dir status", "git -C sub status --short", ""},
		{"git grep -o is only-matching", "git grep -o -n foo", ""},
		{"git -p log", "git -p log", ""},
		// find
		{"find -exec", "find . -name *.go -exec rm {} ;", "-exec"},
		{"find -execdir", "find . -execdir sh -c id ;", "-execdir"},
		{"find -delete", "find /tmp -delete", "-delete"},
		{"find -fprint", "find . -fprint /tmp/list", "-fprint"},
		{"find -fls", "find . -fls out", "-fls"},
		{"find -ok", "find . -ok rm {} ;", "-ok"},
		{"find read-only", "find . -type f -name *.go -print", ""},
		// sort
		{"sort -o", "sort -o out.txt in.txt", "-o"},
		{"sort -o in a bundle", "sort -uo out.txt in.txt", "-uo"},
		{"sort --output=", "sort --output=x in", "--output"},
		{"sort --out abbreviated", "sort --out=x in", "--out"},
		{"sort --compress-program", "sort --compress-program=sh big", "--compress-program"},
		{"sort -t o is a separator", "sort -to -k2 in", ""},
		{"sort read-only", "sort -rn -k2,2 data.txt", ""},
		// sed
		{"sed -i", "sed -i s/a/b/ f.txt", "-i"},
		{"sed -i.bak", "sed -i.bak s/a/b/ f.txt", "-i.bak"},
		{"sed -ni bundle", "sed -ni p f.txt", "-ni"},
		{"sed --in-place", "sed --in-place=.orig s/a/b/ f", "--in-place"},
		{"sed -f script file", "sed -f x.sed f", "-f"},
		{"sed e command", "sed 1e\x00id f", "e"},
		{"sed s///e", "sed s/.*/id/e f", "s///e"},
		{"sed w command", "sed -n w\x00/tmp/out f", "w"},
		{"sed s///w flag", "sed s/x/y/w\x00out f", "s///w"},
		{"sed -e script with e", "sed -n -e p -e 2e\x00id f", "e"},
		{"sed print range", "sed -n 1,10p f.txt", ""},
		{"sed substitution with e in it", "sed s/e/E/g f.txt", ""},
		{"sed delete lines", "sed /^$/d f.txt", ""},
		{"sed -e value holds i", "sed -es/i/I/ f", ""},
		{"sed y command", "sed y/abc/xyz/ f", ""},
		{"sed append text with w in it", "sed 1a\x00write\x00here f", ""},
		// awk
		{"awk system()", "awk {system(\"id\")}", "system"},
		{"awk system with a space", "awk BEGIN{system\x00(\"id\")}", "system"},
		{"awk print > file", "awk {print\x00$1\x00>\x00\"out\"} f", "print >"},
		{"awk print | command", "awk {print\x00|\x00\"sh\"} f", "print |"},
		{"awk command | getline", "awk BEGIN{\"id\"|getline\x00x}", "| getline"},
		{"awk coprocess", "gawk BEGIN{print\x00\"x\"\x00|&\x00\"sh\"}", "|&"},
		{"awk -f program file", "awk -f prog.awk f", "-f"},
		{"gawk -l load", "gawk -l filefuncs 1", "-l"},
		{"awk comparison", "awk $3>100{print\x00$1} f", ""},
		{"awk or", "awk $1==1||$2==2 f", ""},
		{"awk string with system( in it", "awk {print\x00\"system(x)\"} f", ""},
		{"awk -F and -v", "awk -F: -v n=1 {print\x00$n} /etc/passwd", ""},
		// less and man
		{"less -o log file", "less -o /tmp/copy f", "-o"},
		{"less --log-file", "less --log-file=x f", "--log-file"},
		{"less +! shell", "less +!id f", "+!id"},
		{"less -k lesskey", "less -k keys f", "-k"},
		{"less +G", "less +G f", ""},
		{"less +/pattern", "less +/error f", ""},
		{"less +100g", "less +100g f", ""},
		{"less -R -S", "less -RS f", ""},
		{"man -P", "man -P sh\x00-c\x00id ls", "-P"},
		{"man --pager", "man --pager=id ls", "--pager"},
		{"man -H browser", "man -Hfirefox ls", "-Hfirefox"},
		{"man plain", "man 5 crontab", ""},
		// tee, uniq, xxd, date
		{"tee writes", "tee out.log", "out.log"},
		{"tee -a writes", "tee -a ~/.bashrc", "~/.bashrc"},
		{"tee /dev/null", "tee /dev/null", ""},
		{"uniq output file", "uniq in.txt out.txt", "out.txt"},
		{"uniq read-only", "uniq -c -f 2 in.txt", ""},
		{"xxd -r", "xxd -r dump bin", "-r"},
		{"xxd second operand", "xxd in out", "out"},
		{"xxd dump", "xxd -l 64 -c 16 bin", ""},
		{"date -s", "date -s 2020-01-01", "-s"},
		{"date --set", "date --set=now", "--set"},
		{"date bare time operand", "date 010100002020", "010100002020"},
		{"date format", "date +%Y-%m-%d", ""},
		{"date -d value", "date -d tomorrow +%s", ""},
		{"date --date value", "date --date yesterday", ""},
		// tar, zip
		{"tar --to-command", "tar -xf a.tar --to-command=sh", "--to-command"},
		{"tar --checkpoint-action", "tar -tf a.tar --checkpoint=1 --checkpoint-action=exec=id", "--checkpoint-action"},
		{"tar -I program", "tar -I ./evil -tf a.tar", "-I"},
		{"tar extract", "tar -xzf a.tgz", "-xzf"},
		{"tar extract old style", "tar xzf a.tgz", "xzf"},
		{"tar create old style", "tar czf out.tgz src", "czf"},
		{"tar extract to stdout", "tar -xOf a.tar file", ""},
		{"tar list", "tar -tzvf a.tgz", ""},
		{"tar list old style", "tar tf a.tar", ""},
		{"tar --checkpoint alone", "tar -tf a.tar --checkpoint=10", ""},
		{"zip -TT", "zip -T -TT sh\x00-c\x00id a.zip f", "-TT"},
		{"zip --unzip-command", "zip --unzip-command=id a.zip f", "--unzip-command"},
		// others
		{"rg --pre", "rg --pre ./x pattern", "--pre"},
		{"rg plain", "rg -n --glob *.go TODO", ""},
		{"fd -x", "fd -e go -x rm", "-x"},
		{"fd --exec-batch", "fd --exec-batch rm", "--exec-batch"},
		{"tree -o", "tree -o out.txt", "-o"},
		{"rsync -e", "rsync -e sh\x00-c\x00id a b", "-e"},
		{"ssh ProxyCommand", "ssh -o ProxyCommand=id host", "-o proxycommand"},
		{"ssh -oProxyCommand attached", "ssh -oProxyCommand=id host", "-o proxycommand"},
		{"ssh -o LocalCommand separate", "ssh -o LocalCommand\x00id host", "-o localcommand"},
		{"ssh -F", "ssh -F ./cfg host", "-F"},
		{"ssh -o harmless", "ssh -o ConnectTimeout=5 host uptime", ""},
		{"scp -S", "scp -S ./prog a host:b", "-S"},
		{"curl -o", "curl -o /tmp/x https://x", "-o"},
		{"curl -sSLo bundle", "curl -sSLo x https://x", "-sSLo"},
		{"curl --output", "curl --output x https://x", "--output"},
		{"curl -K", "curl -K cfg https://x", "-K"},
		{"curl plain", "curl -sS -H Accept:\x00json https://x", ""},
		{"go -toolexec", "go build -toolexec=./x ./...", "-toolexec"},
		{"go --exec", "go test --exec ./run ./...", "-exec"},
		{"go vet -vettool", "go vet -vettool=/tmp/v ./...", "-vettool"},
		{"go build plain", "go build ./...", ""},
		{"dmesg -c", "dmesg -c", "-c"},
		{"hostname set", "hostname evil", "evil"},
		{"hostname read", "hostname -f", ""},
		{"yq -i", "yq -i .a=1 f.yaml", "-i"},
		{"journalctl --vacuum-time", "journalctl --vacuum-time=1s", "--vacuum-time"},
		{"bat --pager", "bat --pager=id f", "--pager"},
		// assignments and env
		{"GIT_PAGER assignment", "GIT_PAGER=id git log", "GIT_PAGER"},
		{"LESSOPEN assignment", "LESSOPEN=|id\x00%s less f", "LESSOPEN"},
		{"PATH assignment", "PATH=/tmp/evil:/usr/bin ls", "PATH"},
		{"GIT_CONFIG_KEY_0", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager git log", "GIT_CONFIG_COUNT"},
		{"harmless assignment", "LC_ALL=C sort f", ""},
		{"env then git -c", "env -i FOO=1 git -c x=y log", "-c"},
		{"env GIT_PAGER", "env GIT_PAGER=id git log", "GIT_PAGER"},
		{"env -S", "env -S git\x00log\x00--output=x", "--output"},
		{"env plain", "env GOOS=linux go build ./...", ""},
		// program spelling
		{"full path of the program", "/usr/bin/sort -o x y", "-o"},
		{"unknown program", "ls -la --color=always", ""},
		{"cat", "cat -n f", ""},
		{"empty", "", ""},
	} {
		var argv []string
		if tc.argv != "" {
			for _, w := range strings.Split(tc.argv, " ") {
				argv = append(argv, strings.ReplaceAll(w, "\x00", " "))
			}
		}
		got, ok := RiskyOption(argv)
		if ok {
			checkRiskyPrecheck(t, tc.note, argv)
		}
		if tc.want == "" {
			if ok {
				t.Errorf("%s: RiskyOption(%q) = %+v, want none", tc.note, argv, got)
			}
			continue
		}
		if !ok || got.Option != tc.want {
			t.Errorf("%s: RiskyOption(%q) = %+v, %v; want option %q", tc.note, argv, got, ok, tc.want)
			continue
		}
		if got.Reason == "" {
			t.Errorf("%s: RiskyOption(%q) gave no reason", tc.note, argv)
		}
	}
}

// TestRiskyOptionEscalation: an allow from an allow rule becomes ask when a
// simple command uses a risky option the rule does not name, with a trace
// step naming the option; an allow from the tool level, or from a rule that
// names the option, is left alone.
func TestRiskyOptionEscalation(t *testing.T) {
	rules := []any{
		map[string]any{"id": "log", "tools": []any{"bash"}, "pattern": "git log *", "action": "allow"},
		map[string]any{"id": "sort", "tools": []any{"bash"}, "pattern": "sort *", "action": "allow"},
		map[string]any{"id": "sedi", "tools": []any{"bash"}, "pattern": "sed -i *", "action": "allow"},
		map[string]any{"id": "find", "tools": []any{"bash"}, "pattern": "re:^find ", "action": "allow"},
		map[string]any{"id": "user_allow_sed", "tools": []any{"bash"}, "pattern": "sed -n 1e\\ date f.txt", "action": "allow", "source": "user_approval"},
	}
	careful, problems := Compile(map[string]any{"enabled": true, "schema": "tiered_policy",
		"tools": map[string]any{"bash": "ask"}, "rules": rules}, nil, Options{Workspace: "/ws", HomeDir: "/home/u"})
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	open, _ := Compile(map[string]any{"enabled": true, "schema": "tiered_policy", "tools": map[string]any{"bash": "allow"}}, nil,
		Options{Workspace: "/ws", HomeDir: "/home/u"})
	legacy, _ := Compile(map[string]any{"enabled": true, "tools": map[string]any{"bash": map[string]any{
		"patterns": map[string]any{"git diff *": "allow"}, "*": "ask"}}}, nil, Options{Workspace: "/ws", HomeDir: "/home/u"})
	for _, tc := range []struct {
		note string
		e    *Engine
		cmd  string
		want policy.Level
		opt  string // the option the trace names, when escalated
	}{
		{"read-only git log stays allowed", careful, "git log --oneline -n 5", policy.Allow, ""},
		{"git log --output writes a file", careful, "git log -p --output .git/hooks/pre-commit", policy.Ask, "--output"},
		{"git log --ext-diff runs a program", careful, "git log --ext-diff -p -1", policy.Ask, "--ext-diff"},
		{"quoted option is the same option", careful, `git log "--output" x`, policy.Ask, "--output"},
		{"sort -o under sort *", careful, "sort -o out.txt in.txt", policy.Ask, "-o"},
		{"plain sort under sort *", careful, "sort -u in.txt", policy.Allow, ""},
		{"sed -i named by the rule", careful, "sed -i s/a/b/ f.txt", policy.Allow, ""},
		{"sed -i rule, but an e command", careful, "sed -i 1e\\ id f.txt", policy.Ask, "e"},
		{"find -delete under a regex rule", careful, "find . -name x -delete", policy.Ask, "-delete"},
		{"find -exec", careful, "find . -exec rm {} +", policy.Ask, "-exec"},
		{"tool-level allow is not an allow rule", open, "git log --output=x", policy.Allow, ""},
		{"the exact command a person approved", careful, "sed -n 1e\\ date f.txt", policy.Allow, ""},
		{"legacy pattern allow", legacy, "git diff --output x.txt", policy.Ask, "--output"},
		{"legacy pattern, read-only", legacy, "git diff --stat", policy.Allow, ""},
	} {
		d := tc.e.Evaluate(&Request{Call: NewCall("bash", map[string]any{"command": tc.cmd}), ChannelID: "web", Explain: true})
		if d.Level != tc.want {
			t.Errorf("%s: %q got %s (rule %q), want %s", tc.note, tc.cmd, d.Level, d.MatchedRule, tc.want)
			continue
		}
		if tc.opt == "" {
			continue
		}
		found := false
		for _, s := range d.Trace {
			if s.Name == "risky_option" && strings.Contains(s.Detail, " "+tc.opt+" ") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: %q: no risky_option trace step naming %q in %+v", tc.note, tc.cmd, tc.opt, d.Trace)
		}
	}
}

// TestNamesWord: an option counts as named by a pattern only as a whole word.
func TestNamesWord(t *testing.T) {
	for _, tc := range []struct {
		note, pattern, opt string
		want               bool
	}{
		{"glob names it", "sed -i *", "-i", true},
		{"inside a longer option", "git log --oneline *", "-o", false},
		{"with a value", "git log --output=* *", "--output", true},
		{"regex alternative", "re:^sort (-o|-u)", "-o", true},
		{"absent", "git log *", "--output", false},
		{"empty option", "git log *", "", false},
	} {
		if got := namesWord(tc.pattern, tc.opt); got != tc.want {
			t.Errorf("%s: namesWord(%q, %q) = %v, want %v", tc.note, tc.pattern, tc.opt, got, tc.want)
		}
	}
}

// FuzzRiskyOption: any argv (words split on spaces, \x00 inside a word is a
// space) is checked without a panic, and a risky finding always names the
// option and says why.
func FuzzRiskyOption(f *testing.F) {
	for _, seed := range []string{
		"git -c a=b log", "sed -n 1e\x00id f", "sed s", "sed y", "sed \\", "awk {print>", "awk \"", "less +",
		"tar x", "tar --to", "xxd -r", "ssh -o", "ssh -o =", "env -S", "env -u", "date 1", "find . -exec",
		"GIT_PAGER=x git log", "=x git", "sort --o", "curl -sSLo", "git grep -O", "hostname", "go --exec=x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var argv []string
		for _, w := range strings.Split(s, " ") {
			argv = append(argv, strings.ReplaceAll(w, "\x00", " "))
		}
		use, ok := RiskyOption(argv)
		if ok && (use.Reason == "" || use.Option == "" && use.Program == "") {
			t.Errorf("RiskyOption(%q) = %+v: a finding without an option or reason", argv, use)
		}
	})
}

// checkRiskyPrecheck: mayHaveRiskyOption, which spares the split of a
// plain command, is true for every plain spelling of a command in which
// RiskyOption finds something (it may only be looser about skipping).
func checkRiskyPrecheck(t *testing.T, note string, argv []string) {
	t.Helper()
	for _, w := range argv {
		if strings.ContainsAny(w, " \t") {
			return // not a plain command's word
		}
	}
	rest := strings.Join(argv[1:], " ")
	for _, cmd := range []string{
		strings.Join(argv, " "),
		strings.Join(argv, "\t"),
		"  " + strings.Join(argv, " "),
		"/usr/bin/" + argv[0] + " " + rest,
		argv[0] + ".exe " + rest,
		"LC_ALL=C " + strings.Join(argv, " "),
		argv[0] + "\u00a0" + rest,
	} {
		if _, found := RiskyOption(strings.Fields(cmd)); found && !mayHaveRiskyOption(cmd) {
			t.Errorf("%s: %q has a risky option, but the precheck skips it", note, cmd)
		}
	}
}
