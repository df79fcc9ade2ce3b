package engine_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
)

// The rewrites of the metamorphic test and FuzzObfuscation: each
// turns a simple command into one bash runs the same way.

// chooser picks among n choices: a seeded random source for the property
// test, the fuzz input's bytes for the fuzz target.
type chooser interface {
	intn(n int) int
}

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.IntN(n) }

// byteChooser reads its choices from fuzz bytes; past their end it picks 0.
type byteChooser struct {
	b []byte
	i int
}

func (c *byteChooser) intn(n int) int {
	if c.i >= len(c.b) {
		return 0
	}
	v := int(c.b[c.i])
	c.i++
	return v % n
}

// obfCmd is a command being obfuscated: its words as shell source and
// whether a program wrapper may still be put in front of it (not once its
// head is the eval builtin).
type obfCmd struct {
	words    []string
	builtin  bool // the head is a shell builtin (eval): no program wrapper
	applied  []string
	trailing string // a comment or closing text appended when rendering
	leading  string // an opening text prepended when rendering
	prelude  string // assignments run before the command ("V0=x; ")
	vars     int    // variables assigned in prelude
	// seedBuiltin: the seed's program is a shell builtin (source, cd), which
	// no program can launch.
	seedBuiltin bool
	// argv is the index in words of the seed's own program, -1 once the
	// command has been turned into script text (eval, bash -c, find -exec).
	argv int
}

// plainWord matches words with no shell-special character, which every
// word-level obfuscation may rewrite without changing their value.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./:=+@%^-]+$`)

// programName matches a bare program name that a full path can replace.
var programName = regexp.MustCompile(`^[a-z][a-z0-9._+-]*$`)

// programWrappers run their operands as a command; bash runs the wrapped
// command as it would run it alone (with other scheduling or privileges).
var programWrappers = [][]string{
	{"env"}, {"env", "-i"}, {"env", "LC_ALL=C"}, {"command"}, {"nice", "-n", "5"}, {"nice"},
	{"timeout", "5"}, {"timeout", "-s", "KILL", "30"}, {"nohup"}, {"stdbuf", "-o0"}, {"stdbuf", "-oL", "-eL"},
	{"sudo"}, {"sudo", "-n"}, {"doas"}, {"time"}, {"time", "-p"}, {"exec"}, {"setsid"}, {"ionice", "-c3"},
	{"chrt", "-o", "0"}, {"taskset", "-c", "0"}, {"builtin", "command"},
	{"exec", "-a", "name"}, {"command", "-p"}, {"env", "-u", "HOME", "--"}, {"nice", "--adjustment=5"},
	{"timeout", "--signal=KILL", "5"}, {"sudo", "-u", "root", "--"}, {"sudo", "-Eu", "root"}, {"eatmydata"},
}

// programDirs are where full program paths are taken from.
var programDirs = []string{"/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/"}

// shellBuiltins cannot be named by a full path or run by a program wrapper.
var shellBuiltins = map[string]bool{
	"eval": true, "exec": true, "command": true, "builtin": true, "time": true, "cd": true, "history": true,
	"export": true, "unset": true, "set": true, "source": true, ".": true,
}

// comments are the texts of trailing comments; {{trusted}} is filled in.
var comments = []string{"note", "TODO: tidy up", "{{trusted}}", "rm -rf /", "ok"}

// obfuscations are the rewrites, by name. Each reports whether it applied.
var obfuscations = []struct {
	name  string
	apply func(c *obfCmd, ch chooser, f *issueFixture) bool
}{
	{"quote-split", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		i, ok := plainWordIndex(c, ch)
		if !ok {
			return false
		}
		w := c.words[i]
		at := ch.intn(len(w) + 1)
		c.words[i] = w[:at] + pick(ch, "''", `""`) + w[at:]
		return true
	}},
	{"ansi-c-char", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		i, ok := plainWordIndex(c, ch)
		if !ok {
			return false
		}
		w := c.words[i]
		at := ch.intn(len(w))
		c.words[i] = w[:at] + ansiC(w[at], ch) + w[at+1:]
		return true
	}},
	{"brace", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		i, ok := plainWordIndex(c, ch)
		if !ok {
			return false
		}
		c.words[i] = "{" + c.words[i] + ",}"
		return true
	}},
	{"unset-prefix", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		i := ch.intn(len(c.words))
		if strings.HasPrefix(c.words[i], "~") {
			return false
		}
		c.words[i] = `"$` + pick(ch, "UNSET_X", "Q9", "EMPTY_V", "ZZ_") + `"` + c.words[i]
		return true
	}},
	{"wrapper", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		if c.builtin || c.leading != "" {
			return false
		}
		w := programWrappers[ch.intn(len(programWrappers))]
		c.words = append(append([]string{}, w...), c.words...)
		// A builtin head (command, exec) cannot be run by exec or by a
		// program wrapper in turn.
		c.builtin = shellBuiltins[w[0]]
		if c.argv >= 0 {
			c.argv += len(w)
		}
		return true
	}},
	{"backslash", func(c *obfCmd, _ chooser, _ *issueFixture) bool {
		if !plainWord.MatchString(c.words[0]) {
			return false
		}
		c.words[0] = `\` + c.words[0]
		return true
	}},
	{"full-path", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		w := c.words[0]
		if !programName.MatchString(w) || shellBuiltins[w] {
			return false
		}
		c.words[0] = programDirs[ch.intn(len(programDirs))] + w
		return true
	}},
	{"eval", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		if c.leading != "" {
			return false
		}
		c.words = []string{"eval", shellQuote(render(c, nil))}
		c.trailing, c.prelude, c.builtin, c.argv = "", "", true, -1
		return true
	}},
	{"shell-c", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		if c.leading != "" {
			return false
		}
		text := render(c, nil)
		shell := pick(ch, "bash", "bash", "/bin/bash", "sh")
		if shell == "sh" && strings.ContainsAny(text, "{$") {
			shell = "bash" // dash has neither brace expansion nor $'...'
		}
		c.words = []string{shell, "-c", shellQuote(text)}
		c.trailing, c.prelude, c.builtin, c.argv = "", "", false, -1
		return true
	}},
	{"subshell-exec", func(c *obfCmd, _ chooser, _ *issueFixture) bool {
		if c.builtin || c.leading != "" || c.trailing != "" {
			return false
		}
		c.leading, c.trailing = "(exec ", ")"
		return true
	}},
	{"comment", func(c *obfCmd, ch chooser, f *issueFixture) bool {
		if c.trailing != "" {
			return false
		}
		c.trailing = pick(ch, " #", " # ", "\t# ") + f.fill(comments[ch.intn(len(comments))]).(string)
		return true
	}},
	{"quote-word", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		i, ok := plainWordIndex(c, ch)
		if !ok {
			return false
		}
		q := pick(ch, "'", `"`)
		c.words[i] = q + c.words[i] + q
		return true
	}},
	{"path-noise", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		var idx []int
		for i, w := range c.words {
			if pathWord.MatchString(w) {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			return false
		}
		i := idx[ch.intn(len(idx))]
		w := c.words[i]
		var slashes []int
		for j := 0; j < len(w); j++ {
			if w[j] == '/' {
				slashes = append(slashes, j)
			}
		}
		at := slashes[ch.intn(len(slashes))] + 1
		c.words[i] = w[:at] + pick(ch, "./", "/", "././") + w[at:]
		return true
	}},
	{"assign-var", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		i, ok := plainWordIndex(c, ch)
		if !ok || c.vars >= 3 {
			return false
		}
		name := fmt.Sprintf("V%d", c.vars)
		c.vars++
		c.prelude += name + "=" + c.words[i] + pick(ch, "; ", "\n", " && ")
		c.words[i] = pick(ch, "$"+name, `"$`+name+`"`)
		return true
	}},
	{"find-exec", func(c *obfCmd, _ chooser, _ *issueFixture) bool {
		if c.builtin || c.leading != "" || shellBuiltins[c.words[0]] {
			return false
		}
		for _, w := range c.words {
			if strings.Contains(w, ";") || strings.Contains(w, "{}") || w == "+" {
				return false
			}
		}
		c.words = append(append([]string{"find", ".", "-maxdepth", "0", "-exec"}, c.words...), `\;`)
		c.argv = -1
		return true
	}},
	{"env-S", func(c *obfCmd, _ chooser, _ *issueFixture) bool {
		if c.builtin || c.leading != "" || shellBuiltins[c.words[0]] {
			return false
		}
		for _, w := range c.words {
			if !plainWord.MatchString(w) {
				return false // env -S splits words itself: no quotes, no expansions
			}
		}
		c.words = []string{"env", "-S", shellQuote(strings.Join(c.words, " "))}
		c.argv = -1
		return true
	}},
	// A launcher that no wrapper table lists runs the command after it:
	// the closed-world analysis reads it like the command it launches.
	{"launcher", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		if c.builtin || c.seedBuiltin || c.leading != "" || shellBuiltins[c.words[0]] {
			return false
		}
		l := pick(ch, "setarch x86_64", "linux64", "setarch linux64")
		c.words = append(strings.Fields(l), c.words...)
		c.applied = append(c.applied, "wrapper:"+strings.Fields(l)[0])
		if c.argv >= 0 {
			c.argv += len(strings.Fields(l))
		}
		return true
	}},
	// A Windows executable suffix on the program: git.exe is git.
	{"exe-suffix", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		if c.argv < 0 {
			return false
		}
		w := c.words[c.argv]
		if !programName.MatchString(w) || shellBuiltins[w] || strings.Contains(w, ".") {
			return false // one suffix: git.exe.exe is another name
		}
		c.words[c.argv] += pick(ch, ".exe", ".EXE", ".cmd", ".bat")
		return true
	}},
	// Options before git's subcommand do not change which it runs.
	{"git-opts", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		if c.argv < 0 || strings.Trim(c.words[c.argv], `\'"`) != "git" {
			return false
		}
		opts := strings.Fields(pick(ch, "-c color.ui=never", "--no-pager", "-C .", "-c core.quotepath=off --no-pager"))
		at := c.argv + 1
		c.words = append(c.words[:at], append(opts, c.words[at:]...)...)
		return true
	}},
	// An array subscript is code: test -v evaluates it, command
	// substitutions included, with no $( in sight of a plain reader.
	// (test is a builtin whose words are expanded first, so later rewrites
	// of -v keep it the operator, which [[ ]] would not; a comment inside
	// $( ) would swallow its closing parenthesis.)
	{"test-v", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		text := render(c, nil)
		if c.leading != "" || strings.ContainsAny(text, "#\n") {
			return false
		}
		c.words = []string{"test", "-v", shellQuote("a[$(" + text + ")]")}
		c.trailing, c.prelude, c.builtin, c.argv = "", "", true, -1
		return true
	}},
	{"flag-split", func(c *obfCmd, ch chooser, _ *issueFixture) bool {
		if c.argv < 0 || !getoptPrograms[strings.Trim(c.words[c.argv], `\'"`)] {
			return false
		}
		var idx []int
		for i := c.argv + 1; i < len(c.words); i++ {
			if clusteredFlags.MatchString(c.words[i]) {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			return false
		}
		i := idx[ch.intn(len(idx))]
		var split []string
		for _, r := range c.words[i][1:] {
			split = append(split, "-"+string(r))
		}
		c.words = append(c.words[:i], append(split, c.words[i+1:]...)...)
		return true
	}},
}

// pathWord matches absolute or ~/ paths of plain characters, in which a
// "./" or an extra "/" after a slash names the same file.
var pathWord = regexp.MustCompile(`^~?/[A-Za-z0-9_./:=+@%^-]*$`)

// clusteredFlags matches a cluster of short options such as -rf.
var clusteredFlags = regexp.MustCompile(`^-[a-zA-Z]{2,}$`)

// getoptPrograms parse clustered short options as separate ones, so -rf
// and -r -f are the same to them.
var getoptPrograms = map[string]bool{
	"rm": true, "chmod": true, "chown": true, "chgrp": true, "cp": true, "mv": true, "shred": true, "ln": true,
	"ls": true, "cat": true, "grep": true,
}

// plainWordIndex picks a word with no special characters, if any.
func plainWordIndex(c *obfCmd, ch chooser) (int, bool) {
	var idx []int
	for i, w := range c.words {
		if plainWord.MatchString(w) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return 0, false
	}
	return idx[ch.intn(len(idx))], true
}

func pick(ch chooser, options ...string) string { return options[ch.intn(len(options))] }

// ansiC spells one byte as $'\xNN' or $'\NNN' (octal).
func ansiC(b byte, ch chooser) string {
	if ch.intn(2) == 0 {
		return fmt.Sprintf(`$'\x%02x'`, b)
	}
	return fmt.Sprintf(`$'\%03o'`, b)
}

// shellQuote single-quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// render joins the words with single spaces, or with the blanks ch picks
// (spaces and tabs, possibly leading) when ch is not nil.
func render(c *obfCmd, ch chooser) string {
	var b strings.Builder
	if ch != nil && ch.intn(3) == 0 {
		b.WriteString(pick(ch, " ", "\t", "  "))
	}
	b.WriteString(c.prelude)
	b.WriteString(c.leading)
	for i, w := range c.words {
		if i > 0 {
			if ch == nil {
				b.WriteByte(' ')
			} else {
				b.WriteString(pick(ch, " ", " ", "  ", "\t", " \t "))
			}
		}
		b.WriteString(w)
	}
	b.WriteString(c.trailing)
	return b.String()
}

// obfuscate applies a chain of up to maxSteps rewrites to seed and renders
// the result, with extra blanks when ch chooses. It returns the command and
// the names of the rewrites applied.
func obfuscate(seed obfSeed, ch chooser, f *issueFixture, maxSteps int) (string, []string) {
	c := &obfCmd{words: append([]string{}, seed.words...), seedBuiltin: len(seed.words) > 0 && shellBuiltins[seed.words[0]]}
	steps := 1 + ch.intn(maxSteps)
	for s := 0; s < steps; s++ {
		o := obfuscations[ch.intn(len(obfuscations))]
		if o.apply(c, ch, f) {
			name := o.name
			if name == "wrapper" {
				name += ":" + c.words[0]
			}
			c.applied = append(c.applied, name)
		}
	}
	blanks := ch.intn(2) == 0
	if blanks {
		c.applied = append(c.applied, "blanks")
		return render(c, ch), c.applied
	}
	return render(c, nil), c.applied
}
