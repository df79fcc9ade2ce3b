package shell

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTailsOnlyIsTrue: whenever tailsOnly vouches for a command, every
// reading launchReadings gives for it is a tail of it (starting after a
// blank or a slash), and none is cut. It runs on the commands of the
// engine's corpora and red-team tables, plus rows that must be refused.
func TestTailsOnlyIsTrue(t *testing.T) {
	commands := []string{"npm run build --silent", "chronic git push origin main", "setarch x86_64 git push",
		"git.exe push", "/usr/lib/git-core/git-push origin", "git -C . push", "nice -n 5 git push",
		"git send-pack origin main", "make -j4 all", "npm test -- --watch", "cargo run --release"}
	for _, name := range []string{"../testdata/corpus/benign_tune.txt", "../testdata/corpus/benign_heldout.txt",
		"../testdata/corpus/dangerous_tune.txt", "../testdata/corpus/dangerous_heldout.txt", "../testdata/redteam/closed_world_benign.txt"} {
		f, err := os.Open(filepath.FromSlash(name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if line == "" || line[0] == '#' {
				continue
			}
			if fields := strings.SplitN(line, "\t", 3); len(fields) == 3 {
				line = fields[2]
			}
			commands = append(commands, line)
		}
		f.Close()
	}
	vouched, refused := 0, 0
	for _, c := range commands {
		if !plainShape(c) {
			continue
		}
		if pr := Classify(c); pr.Launch && pr.TailsOnly != tailsOnly(c) {
			t.Errorf("Classify(%q).TailsOnly = %v, tailsOnly says %v", c, pr.TailsOnly, tailsOnly(c))
		}
		if !tailsOnly(c) {
			refused++
			continue
		}
		vouched++
		ok := launchReadings(c, nil, func(r string) {
			k := len(c) - len(r)
			if k <= 0 || c[k:] != r || c[k-1] != ' ' && c[k-1] != '/' {
				t.Errorf("tailsOnly(%q), but %q is no tail of it", c, r)
			}
		})
		if !ok {
			t.Errorf("tailsOnly(%q), but its readings were cut", c)
		}
	}
	if vouched < 100 || refused < 20 {
		t.Fatalf("vouched for %d commands and refused %d: the check checked little", vouched, refused)
	}
	t.Logf("%d plain commands vouched for, %d refused", vouched, refused)
}

// TestNoPathByteNoPathWord: a word without a byte MayHoldPath looks for is
// never a path word nor a glued option value, so a command without one
// needs no look at its words (the engine's external check skips them).
func TestNoPathByteNoPathWord(t *testing.T) {
	words := []string{"$HOME", "${HOME}", "-la", "-o", "--out=x", "HOME=x", "npm", "run", "build", "--silent", "-C", "x=y", "~", ".", "..", "-o~", "-I.", "C:", "a:b"}
	for _, name := range []string{"../testdata/corpus/benign_tune.txt", "../testdata/corpus/dangerous_tune.txt"} {
		b, err := os.ReadFile(filepath.FromSlash(name))
		if err != nil {
			t.Fatal(err)
		}
		words = append(words, strings.Fields(string(b))...)
	}
	skipped := 0
	for _, w := range words {
		if MayHoldPath(w) {
			continue
		}
		skipped++
		if p, ok := PathWord(w, "/home/u"); ok {
			t.Errorf("%q has no path byte but PathWord gives %q", w, p)
		}
		if v, ok := ShortOptionValue(w); ok {
			t.Errorf("%q has no path byte but ShortOptionValue gives %q", w, v)
		}
	}
	if skipped < 1000 {
		t.Fatalf("only %d words without a path byte: the check checked little", skipped)
	}
}

// tailsOnly reports whether every launch reading of a plain command (words
// separated by single spaces) is a tail of it: no word spelt with an
// executable suffix or as git's own program (git-push), no option followed
// by a later word (which may be a subcommand read without the option), no
// git push plumbing, and few enough words that no reading is cut. The rules
// that match wherever their text starts cannot add a hit to such a command
// through its readings (engine's tail rules), so a caller whose anchored
// rules have no candidate need not walk them. It is the
// test's plain statement of what Classify's TailsOnly computes in its own
// pass; TestTailsOnlyIsTrue checks both against launchReadings itself.
func tailsOnly(s string) bool {
	words, option := 0, false
	for rest := s; rest != ""; {
		w := rest
		if i := strings.IndexByte(rest, ' '); i >= 0 {
			w, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		words++
		switch {
		case words > maxTailWords, option && !isOptionWord(w):
			return false
		case isOptionWord(w):
			option = true
			continue
		}
		if !tailWord(w) {
			return false
		}
	}
	return true
}
