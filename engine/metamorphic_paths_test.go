package engine_test

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// The path half of the metamorphic property (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm): a
// path named another way, a file named relative to a workdir, a command as
// an argv array, and a call with a second path never decide looser.

// pathSeeds are path values for the path tools: outside the workspace by
// every route the fixture offers, and a few inside it (which the careful
// policy's write tools still ask about). {{...}} names a fixture directory.
var pathSeeds = []string{
	"/etc/shadow", "/etc/hostname", "/root/.bashrc", "~/.ssh/id_rsa", "~/.bashrc",
	"{{outside}}/secret.txt", "{{home}}/.aws/credentials", "../../.bashrc", "../secret",
	"rootlink/etc/hostname", "etclink/passwd", "homelink/.ssh/id_rsa", "outlink/secret.txt",
	"up/.bashrc", "dangle", "{{trusted}}/../outside/secret.txt", "src/main.go", "Makefile", ".git/config",
}

// pathTools are the path tools the path property is checked with.
var pathTools = []string{"read_file", "write_file", "edit_file", "list_dir", "grep"}

// pathRewrites name the same file another way: ./ or an extra / after a
// slash, a detour through a real directory and back, the absolute form of
// a relative path (and a relative form of an absolute one), $HOME for ~.
var pathRewrites = []struct {
	name  string
	apply func(p string, ch chooser, f *issueFixture) (string, bool)
}{
	{"dot-slash", func(p string, ch chooser, _ *issueFixture) (string, bool) {
		at, ok := afterSlash(p, ch)
		if !ok {
			return "./" + p, !strings.HasPrefix(p, "~")
		}
		return p[:at] + "./" + p[at:], true
	}},
	{"double-slash", func(p string, ch chooser, _ *issueFixture) (string, bool) {
		at, ok := afterSlash(p, ch)
		if !ok || at == 1 {
			return p, false // a leading // may be read as a UNC name
		}
		return p[:at] + "/" + p[at:], true
	}},
	{"detour", func(p string, ch chooser, f *issueFixture) (string, bool) {
		switch {
		case strings.HasPrefix(p, "~/"):
			return "~/../" + filepath.Base(f.home) + "/" + p[2:], true
		case strings.HasPrefix(p, "/"):
			first, _, _ := strings.Cut(p[1:], "/")
			return "/" + first + "/../" + p[1:], true
		case strings.HasPrefix(p, "$"):
			return p, false
		}
		return pick(ch, "src/../", "docs/../", "./src/../") + p, true
	}},
	{"absolute", func(p string, ch chooser, f *issueFixture) (string, bool) {
		switch {
		case strings.HasPrefix(p, "~") || strings.HasPrefix(p, "$"):
			return p, false
		case strings.HasPrefix(p, "/"):
			return strings.Repeat("../", 24) + p[1:], true
		}
		return f.ws + "/" + p, true
	}},
	{"home-var", func(p string, _ chooser, f *issueFixture) (string, bool) {
		switch {
		case strings.HasPrefix(p, "~/"):
			return "$HOME/" + p[2:], true
		case strings.HasPrefix(p, f.home+"/"):
			return "~/" + strings.TrimPrefix(p, f.home+"/"), true
		}
		return p, false
	}},
}

// afterSlash picks an index just after one of p's slashes.
func afterSlash(p string, ch chooser) (int, bool) {
	var at []int
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			at = append(at, i+1)
		}
	}
	if len(at) == 0 {
		return 0, false
	}
	return at[ch.intn(len(at))], true
}

// pathShapes put a path value into tool_args in another shape: its own
// key, file_path, a nested object, a list under its key, an edit list, or
// beside a workspace path. (A bare name under a key that is not a path key
// is not a path value by docs/decisions.md, so no shape uses one.)
var pathShapes = []func(key, p string) map[string]any{
	func(key, p string) map[string]any { return map[string]any{key: p} },
	func(_, p string) map[string]any { return map[string]any{"file_path": p} },
	func(key, p string) map[string]any { return map[string]any{"args": map[string]any{key: p}} },
	func(key, p string) map[string]any { return map[string]any{key: []any{"src/main.go", p}} },
	func(_, p string) map[string]any {
		return map[string]any{"edits": []any{map[string]any{"file_path": p, "old_string": "a", "new_string": "b"}}}
	},
	func(key, p string) map[string]any { return map[string]any{key: p, "new_path": "src/main.go"} },
}

// TestMetamorphicPaths: the path property of D6. A path value rewritten to
// name the same file (and put into tool_args in another shape) never
// decides looser than the plain {"path": p} (or file_path for edit_file).
func TestMetamorphicPaths(t *testing.T) {
	f := newIssueFixture(t)
	r := randChooser{rand.New(rand.NewPCG(5, 15))}
	tried, looser := 0, 0
	for _, seed := range pathSeeds {
		p0 := f.fill(seed).(string)
		for _, tool := range pathTools {
			key := "path"
			if tool == "edit_file" {
				key = "file_path"
			}
			for _, policy := range policyNames {
				plain := f.evaluate(policy, tool, map[string]any{key: p0})
				for v := 0; v < 24; v++ {
					p, applied := p0, []string{}
					for s := 1 + r.intn(3); s > 0; s-- {
						rw := pathRewrites[r.intn(len(pathRewrites))]
						if q, ok := rw.apply(p, r, f); ok {
							p, applied = q, append(applied, rw.name)
						}
					}
					shape := r.intn(len(pathShapes))
					args := pathShapes[shape](key, p)
					tried++
					d := f.evaluate(policy, tool, args)
					if d.Level >= plain.Level {
						continue
					}
					looser++
					if looser <= 40 {
						t.Errorf("LOOSER under %s: %s %s decides %s (rule %q); plain %q decides %s [rewrites %v, shape %d]",
							policy, tool, clipArgs(args), d.Level, d.MatchedRule, p0, plain.Level, applied, shape)
					}
				}
			}
		}
	}
	t.Logf("%d path variants decided under 3 policies: %d looser than the plain form", tried, looser)
}

// TestMetamorphicWorkdir: a shell command that names a file by an absolute
// or ~/ path decides no looser when it names the same file relative to a
// workdir instead: the file's directory, the root, the workspace's link to
// the root, or the home directory. Seeds whose other operands could be
// files (they hold a dot or a slash) are left out, since a workdir moves
// those too.
func TestMetamorphicWorkdir(t *testing.T) {
	f := newIssueFixture(t)
	tried, looser := 0, 0
	for _, seed := range obfuscationSeeds(t, f) {
		i, ok := soleAbsolutePath(seed.words)
		if !ok {
			continue
		}
		w := seed.words[i]
		var forms [][2]string // workdir, word
		if rest, home := strings.CutPrefix(w, "~/"); home {
			forms = append(forms, [2]string{"~", rest}, [2]string{f.home, "./" + rest}, [2]string{"$HOME", rest})
		} else {
			dir, base := filepath.Split(w) // the fixture's paths use /
			forms = append(forms, [2]string{"/", strings.TrimPrefix(w, "/")}, [2]string{"rootlink", "." + w},
				[2]string{f.ws, "rootlink" + w})
			if dir != "/" && base != "" {
				forms = append(forms, [2]string{strings.TrimSuffix(dir, "/"), base}, [2]string{dir, "./" + base})
			}
		}
		for _, p := range policyNames {
			plain := f.evalShell(p, seed.text)
			for _, form := range forms {
				words := append([]string{}, seed.words...)
				words[i] = form[1]
				cmd := strings.Join(words, " ")
				tried++
				d := f.evaluate(p, "bash", map[string]any{"command": cmd, "workdir": form[0]})
				if d.Level >= plain.Level {
					continue
				}
				looser++
				if looser <= 40 {
					t.Errorf("LOOSER under %s: %q in workdir %q decides %s (rule %q); %q decides %s",
						p, cmd, form[0], d.Level, d.MatchedRule, seed.text, plain.Level)
				}
			}
		}
	}
	if tried < 100 {
		t.Fatalf("only %d workdir variants: the seeds have too few absolute paths", tried)
	}
	t.Logf("%d workdir variants decided under 3 policies: %d looser than the plain form", tried, looser)
}

// soleAbsolutePath finds the one operand that is an absolute or ~/ path of
// plain characters, when no other operand holds a dot or a slash.
func soleAbsolutePath(words []string) (int, bool) {
	found := -1
	for i, w := range words[1:] {
		switch {
		case pathWord.MatchString(w) && w != "/" && w != "~/":
			if found >= 0 {
				return 0, false
			}
			found = i + 1
		case strings.HasPrefix(w, "-") && !strings.ContainsAny(w, "/="):
		case strings.ContainsAny(w, "./~$`\"'\\{*?["):
			return 0, false
		}
	}
	return found, found >= 0
}

// TestMetamorphicArgv: a seed whose words need no shell expansion runs the
// same as the argv array of those words (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm: a command array is
// that argv), under command and under cmd; neither decides looser.
func TestMetamorphicArgv(t *testing.T) {
	f := newIssueFixture(t)
	tried, looser := 0, 0
	for _, seed := range obfuscationSeeds(t, f) {
		argv := make([]any, 0, len(seed.words))
		for _, w := range seed.words {
			if !plainWord.MatchString(w) {
				argv = nil
				break
			}
			argv = append(argv, w)
		}
		if argv == nil {
			continue
		}
		for _, p := range policyNames {
			plain := f.evalShell(p, seed.text)
			for _, key := range []string{"command", "cmd"} {
				tried++
				d := f.evaluate(p, "bash", map[string]any{key: argv})
				if d.Level < plain.Level {
					looser++
					t.Errorf("LOOSER under %s: {%q: %v} decides %s (rule %q); %q decides %s",
						p, key, argv, d.Level, d.MatchedRule, seed.text, plain.Level)
				}
			}
		}
	}
	if tried < 100 {
		t.Fatalf("only %d argv variants", tried)
	}
	t.Logf("%d argv variants decided under 3 policies: %d looser than the plain form", tried, looser)
}

// unionPaths are path values of every kind the fixture has: in the trusted
// dir, in the workspace, outside, and through symlinks and .. across them.
var unionPaths = []string{
	"{{trusted}}/data.csv", "{{trusted}}/new.txt", "src/main.go", "Makefile", ".env",
	"{{outside}}/secret.txt", "/etc/hostname", "~/.bashrc", "rootlink/etc/hostname",
	"{{trusted}}/../outside/secret.txt", "{{trusted}}/wslink/main.go", "homelink/.bashrc",
}

// withinTrustedOrWorkspace are the unionPaths that resolve under the trusted
// dir or inside the workspace.
var withinTrustedOrWorkspace = map[string]bool{
	"{{trusted}}/data.csv": true, "{{trusted}}/new.txt": true, "src/main.go": true, "Makefile": true,
	".env": true, "{{trusted}}/wslink/main.go": true,
}

// TestMonotonicUnion: a call that touches two paths decides at least as
// strictly as each one-path call, so a second (decoy) path can never buy an
// allow that the other path would not get alone. Path tools get the pair as
// path and file_path, and as a list under path; shell commands as two
// operands of cat, ls and rm -rf.
//
// One exception is the contract's own: D6 lets an /add-dir shell override
// allow a command that names the trusted dir when every path word lies
// under it or in the workspace, so under careful `rm -rf <trusted>/x
// src/main.go` is allow while `rm -rf src/main.go` asks. Those pairs are
// counted and logged, not failed.
func TestMonotonicUnion(t *testing.T) {
	f := newIssueFixture(t)
	tried, looser, sanctioned := 0, 0, 0
	check := func(name, tool string, args map[string]any, alone ...map[string]any) {
		t.Helper()
		want := policy.Allow
		for _, a := range alone {
			want = max(want, f.evaluate(name, tool, a).Level)
		}
		tried++
		if d := f.evaluate(name, tool, args); d.Level < want {
			looser++
			t.Errorf("LOOSER under %s: %s %s decides %s (rule %q); its paths alone decide up to %s",
				name, tool, clipArgs(args), d.Level, d.MatchedRule, want)
		}
	}
	for _, pa := range unionPaths {
		a := f.fill(pa).(string)
		for _, pb := range unionPaths {
			b := f.fill(pb).(string)
			if a == b {
				continue
			}
			for _, policy := range policyNames {
				for _, tool := range []string{"read_file", "write_file", "edit_file"} {
					check(policy, tool, map[string]any{"path": a, "file_path": b}, pathArgs(a), pathArgs(b))
					check(policy, tool, map[string]any{"path": []any{a, b}}, pathArgs(a), pathArgs(b))
				}
				for _, prog := range []string{"cat", "ls", "rm -rf"} {
					if policy == policyCareful && withinTrustedOrWorkspace[pa] && withinTrustedOrWorkspace[pb] {
						sanctioned++
						continue
					}
					check(policy, "bash", cmdArgs(prog+" "+a+" "+b), cmdArgs(prog+" "+a), cmdArgs(prog+" "+b))
				}
			}
		}
	}
	t.Logf("%d two-path calls decided: %d looser than one of their paths alone; %d shell pairs inside the trusted dir and the workspace left to D6's /add-dir rule",
		tried, looser, sanctioned)
}
