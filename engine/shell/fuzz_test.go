package shell

import (
	"slices"
	"strings"
	"testing"
)

// FuzzAnalyzeShell checks that no input makes Analyze panic or hang,
// that it never reports an empty path, that each normalized command is its
// Argv joined, and that the engine's fast path
// agrees with it: for a plain command that parses, splitting on spaces and
// calling PathWord and ShortOptionValue finds the same paths. (A plain command may fail to parse,
// such as a lone reserved word; bash refuses to run those too.)
func FuzzAnalyzeShell(f *testing.F) {
	for _, seed := range []string{
		"echo hi && cat /etc/passwd",
		"ls $(cat /etc/shadow) > /tmp/x 2>&1",
		"diff <(cat a) >(tee b) `pwd`",
		`type C:\Users\me\a.txt && dir D:\`,
		"cat <<EOF\n$(id)\nEOF",
		`echo "${HOME:-~}" '$(x)' \"`,
		// expansions, wrappers and script text read again.
		`cat $X/etc/shadow {/a,/b}/c ~-/x $'\x2f' ${Y:-/d} $((1+2))`,
		`nice -n 5 sudo /bin/rm -rf '/'; X=/etc; cat $X/p`,
		`eval "sh -c 'bash -c \"eval rm -rf ~\"'"`,
		`find . -exec sh -c 'rm "$1"' _ {} + | xargs -0 bash -c 'x'`,
		"bash <<EOF\nrm -rf $HOME\nEOF",
		`eval {a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		analyzeWalk(cmd, Env{Home: "/home/u", Dir: "/ws"}) // panics are not caught here
		a := Analyze(cmd, "/home/u")
		for _, p := range a.Paths {
			if p == "" {
				t.Fatalf("Analyze(%q) reported an empty path", cmd)
			}
		}
		if len(a.Argv) != len(a.Normalized) {
			t.Fatalf("Analyze(%q): %d Argv for %d Normalized", cmd, len(a.Argv), len(a.Normalized))
		}
		for i, argv := range a.Argv {
			if len(argv) == 0 || strings.Join(argv, " ") != a.Normalized[i] {
				t.Fatalf("Analyze(%q).Argv[%d] = %q, Normalized %q", cmd, i, argv, a.Normalized[i])
			}
		}
		if NeedsFullParse(cmd) || !a.Parsed {
			return
		}
		var fast []string
		add := func(p string) {
			if !slices.Contains(fast, p) { // the analysis lists each path once
				fast = append(fast, p)
			}
		}
		for _, w := range strings.Fields(cmd) {
			if v, ok := ShortOptionValue(w); ok {
				add(ExpandHome(v, "/home/u"))
			}
			if p, ok := PathWord(w, "/home/u"); ok {
				add(p)
			}
		}
		got := slices.Clone(a.Paths)
		slices.Sort(got)
		slices.Sort(fast)
		if !slices.Equal(fast, got) {
			t.Fatalf("Analyze(%q).Paths = %q, fast path finds %q", cmd, a.Paths, fast)
		}
	})
}
