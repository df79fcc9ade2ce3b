package engine

import (
	"slices"
	"strings"
	"testing"
)

// FuzzAnalyzeShell checks that no input makes AnalyzeShell panic or hang,
// that it never reports an empty path, and that the engine's fast path
// agrees with it: for a plain command that parses, splitting on spaces and
// calling PathWord finds the same paths. (A plain command may fail to parse,
// such as a lone reserved word; bash refuses to run those too.)
func FuzzAnalyzeShell(f *testing.F) {
	for _, seed := range []string{
		"echo hi && cat /etc/passwd",
		"ls $(cat /etc/shadow) > /tmp/x 2>&1",
		"diff <(cat a) >(tee b) `pwd`",
		`type C:\Users\me\a.txt && dir D:\`,
		"cat <<EOF\n$(id)\nEOF",
		`echo "${HOME:-~}" '$(x)' \"`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		a := AnalyzeShell(cmd, "/home/u")
		for _, p := range a.Paths {
			if p == "" {
				t.Fatalf("AnalyzeShell(%q) reported an empty path", cmd)
			}
		}
		if NeedsFullParse(cmd) || !a.Parsed {
			return
		}
		var fast []string
		for _, w := range strings.Fields(cmd) {
			if p, ok := PathWord(w, "/home/u"); ok {
				fast = append(fast, p)
			}
		}
		if !slices.Equal(fast, a.Paths) {
			t.Fatalf("AnalyzeShell(%q).Paths = %q, fast path finds %q", cmd, a.Paths, fast)
		}
	})
}
