package shell

import "strings"

// Launch readings (docs/decisions.md#unlisted-launchers): the analysis is
// closed-world, so a program that is not known to leave its arguments alone
// may run them. Ask and deny rules therefore also match the run of words
// that starts at any later word that could name a program: setarch x86_64
// git push, chronic rm -rf ~ and gdb --args git push decide like the
// command they launch, although no list of launchers names them. The list
// kept here is the short, auditable one: programs known never to run a
// later word as a program.

// argsInert are the programs known never to run one of their words as a
// program. A program that takes a program through an option value (sort
// --compress-program, tar -I, less with LESSOPEN) is not here, nor is any
// program whose subcommands differ (see inertSubcommands).
var argsInert = setOf(
	"echo", "printf", "cat", "tac", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ls", "dir", "tree",
	"pwd", "mkdir", "rmdir", "rm", "cp", "mv", "ln", "touch", "chmod", "chown", "chgrp", "stat", "file", "du",
	"df", "which", "whereis", "whoami", "id", "uname", "date", "hostname", "basename", "dirname", "realpath",
	"readlink", "diff", "cmp", "comm", "uniq", "cut", "tr", "paste", "fold", "fmt", "nl", "od", "hexdump",
	"xxd", "base64", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "jq", "true", "false", "test",
	"[", "seq", "sleep", "ps", "pgrep", "free", "uptime", "tee", "wget", "curl", "unzip", "zip", "gzip",
	"gunzip", "mktemp", "truncate", "cal", "nproc", "lsof", "kill", "pkill", "killall",
	// Build tools whose words are target names; a variable that names a
	// program (make CC=x) is an assignment word, never a reading's start.
	"make", "gmake", "ninja", "just",
)

// inertSubcommands are programs whose listed subcommands, written right
// after the program, never run a later word as a program (git rm -rf dir
// removes files; it does not run rm). Options before the subcommand, or any
// other subcommand (git rebase --exec, npm exec, go build -toolexec), keep
// the launch readings.
var inertSubcommands = map[string]map[string]bool{
	"git": setOf("status", "log", "diff", "show", "add", "rm", "mv", "commit", "branch", "checkout", "switch",
		"restore", "tag", "stash", "reset", "blame", "ls-files", "rev-parse", "describe", "init", "remote",
		"cherry-pick", "revert", "shortlog", "reflog", "rev-list", "cat-file", "show-ref", "whatchanged"),
	// Package managers' listing subcommands only: their run, test, build
	// and install take a program through an option (npm --script-shell,
	// go build -toolexec, cargo --config runner), so they keep their
	// readings.
	"npm":  setOf("ls", "list", "outdated", "audit", "view", "info"),
	"pnpm": setOf("ls", "list", "outdated", "audit"),
	"yarn": setOf("list", "outdated", "audit", "info"),
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// exeSuffixes are the Windows executable suffixes a program name compares
// without: git.exe is git.
var exeSuffixes = [...]string{".exe", ".cmd", ".bat", ".com"}

// exeSuffix returns the length of a Windows executable suffix of name (any
// case), or 0.
func exeSuffix(name string) int {
	if len(name) < 5 || name[len(name)-4] != '.' {
		return 0
	}
	ext := name[len(name)-4:]
	for _, s := range exeSuffixes {
		if strings.EqualFold(ext, s) {
			return 4
		}
	}
	return 0
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// leavesArgsAlone reports whether a command (its program word and the word
// after it) is known never to run a later word as a program.
func leavesArgsAlone(prog, next string) bool {
	k := lookupProgram(programName(prog))
	return k.inert || k.subs != nil && k.subs[next]
}

// programKind is what the analysis knows of a program name, in one lookup:
// known to leave its arguments alone, the subcommands that do, or a
// wrapper it reads exactly.
type programKind struct {
	inert   bool
	subs    map[string]bool
	wrapper bool
}

// lookupProgram is programs[name], with a shape check first: most words of
// a command name no program the analysis knows, and the check (the name's
// first byte and length) answers for them without hashing the name.
func lookupProgram(name string) programKind {
	if name == "" || programShapes[name[0]]&(1<<min(len(name), 63)) == 0 {
		return programKind{}
	}
	return programs[name]
}

// programShapes marks, for each first byte, the lengths (63 for any
// longer) of the names in programs.
var programShapes = func() (t [256]uint64) {
	for name := range programs {
		t[name[0]] |= 1 << min(len(name), 63)
	}
	return t
}()

// programs joins argsInert, inertSubcommands and the wrapper table.
var programs = func() map[string]programKind {
	m := map[string]programKind{}
	for n := range argsInert {
		k := m[n]
		k.inert = true
		m[n] = k
	}
	for n, subs := range inertSubcommands {
		k := m[n]
		k.subs = subs
		m[n] = k
	}
	for _, n := range []string{"cd", "pushd", "popd"} {
		k := m[n]
		k.wrapper = true
		m[n] = k
	}
	for n := range wrappers {
		k := m[n]
		k.wrapper = true
		m[n] = k
	}
	return m
}()

// PlainReading is what the fast path needs to know of a plain command
// (Classify).
type PlainReading struct {
	// Full: the command needs the full analysis (NeedsFullParse).
	Full bool
	// Launch: the command has launch readings (HasLaunchReadings).
	Launch bool
	// TailsOnly: with Launch, every reading is a tail of the command
	// (tailsOnly), found in the same pass.
	TailsOnly bool
}

// Classify is NeedsFullParse and HasLaunchReadings in one pass, with one
// lookup of the program.
func Classify(cmd string) PlainReading {
	if !plainShape(cmd) {
		return PlainReading{Full: true}
	}
	first := strings.IndexByte(cmd, ' ')
	if first < 0 {
		first = len(cmd)
	}
	name := cmd[:first]
	if strings.IndexByte(name, '/') >= 0 || strings.IndexByte(name, '=') >= 0 || exeSuffix(name) > 0 {
		return PlainReading{Full: true}
	}
	k := lookupProgram(name)
	if k.wrapper || untidyText(cmd) {
		return PlainReading{Full: true}
	}
	if first == len(cmd) {
		return PlainReading{}
	}
	rest := cmd[first+1:]
	next := rest
	if i := strings.IndexByte(rest, ' '); i >= 0 {
		next = rest[:i]
	}
	if k.inert || k.subs != nil && k.subs[next] {
		return PlainReading{}
	}
	wrapper, tails := laterWords(rest)
	if wrapper {
		return PlainReading{Full: true}
	}
	return PlainReading{Launch: true, TailsOnly: tails && tailWord(name)}
}

// laterWords reads the words after a plain command's program in one pass:
// whether one names a wrapper or shell, and whether every launch reading is
// a tail (tailsOnly, for these words).
func laterWords(rest string) (wrapper, tails bool) {
	tails = true
	words, option := 1, false
	for rest != "" {
		w := rest
		if i := strings.IndexByte(rest, ' '); i >= 0 {
			w, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		words++
		if words > maxTailWords {
			tails = false
		}
		if isOptionWord(w) {
			option = true
			continue
		}
		if option || !tailWord(w) {
			tails = false
		}
		if mayNameProgram(w) && lookupProgram(programName(w)).wrapper {
			return true, false
		}
	}
	return false, tails
}

// tailWord reports whether a word that is no option gives, as a program,
// only readings that are tails: not spelt with an executable suffix, not
// git's own program (git-push), not git's push plumbing.
func tailWord(w string) bool {
	return exeSuffix(w) == 0 && !strings.Contains(w, "git-") && w != "send-pack" && w != "http-push"
}

// mayNameProgram reports whether a word could name a program that a
// launcher runs: not empty, not an option, no blank, quote, $ or =, and not
// unknown (an unknown word is handled as an unknown command).
func mayNameProgram(w string) bool {
	if w == "" || w[0] == '-' {
		return false
	}
	for i := 0; i < len(w); i++ {
		if notInProgramName[w[i]] {
			return false
		}
	}
	return true
}

// notInProgramName are the bytes mayNameProgram refuses: a blank, a quote,
// $, =, a backquote, a backslash and UnknownMark's byte. A table, because
// every word of every command is checked.
var notInProgramName = func() (t [256]bool) {
	for _, c := range []byte(" \t\n'\"$=`\\" + UnknownMark) {
		t[c] = true
	}
	return t
}()

// isOptionWord reports whether a word is an option (-x, --long, --k=v).
func isOptionWord(w string) bool { return len(w) > 1 && w[0] == '-' }

// maxLaunchReadings bounds the readings of one simple command. A command
// with more is not read further and cannot be allowed by a rule
// (readingsCut): what the analysis has not read is not shown harmless.
const maxLaunchReadings = 256

// launchReadings calls visit with each launch reading of one simple
// command, and reports false when it stopped at maxLaunchReadings. s is
// the command as one string, its words separated by single spaces, and
// argv its words when a word may hold a space (argv[0] already the program
// name, as the analysis' normalized commands are), or nil to split s at
// its spaces. The readings are: s with the program written without its
// executable suffix; the program followed by each word that options
// before it may leave as the subcommand (git -C . push is read git push);
// and, unless the program is a wrapper the analysis reads exactly or is
// known to leave its arguments alone, the run of words from each later
// word that may name a program, that word taken by its program name, with
// its own option readings (docs/decisions.md#unlisted-launchers). Readings
// are substrings of s except where a name loses its suffix or options are
// skipped.
func launchReadings(s string, argv []string, visit func(reading string)) bool {
	budget := maxLaunchReadings
	counted := func(r string) {
		if budget--; budget >= 0 {
			visit(r)
		}
		if alias, ok := gitPlumbing(r); ok {
			if budget--; budget >= 0 {
				visit(alias)
			}
		}
	}
	ws := wordSpans{s: s, argv: argv}
	end0, ok := ws.next(0)
	if !ok {
		return true
	}
	prog := s[:end0]
	if alias, ok := gitPlumbing(s); ok {
		counted(alias)
	}
	if exeSuffix(programName(prog)) > 0 {
		counted(programName(prog) + s[end0:])
	}
	if sub, ok := gitSubcommandProgram(programName(prog)); ok {
		counted("git " + sub + s[end0:])
	}
	if changesMeaning(programName(prog)) {
		return budget >= 0 // a wrapper or shell: the analysis looks through it exactly
	}
	start1 := end0 + 1
	end1, ok := ws.next(start1)
	if !ok || leavesArgsAlone(prog, s[start1:end1]) {
		return budget >= 0
	}
	if isOptionWord(s[start1:end1]) {
		opts := wordSpans{s: s, argv: argv, i: 1}
		optionReadings(&opts, programName(prog), start1, counted)
	}
	for start, end, i := start1, end1, 1; budget >= 0; i++ {
		w := s[start:end]
		nextStart := end + 1
		nextEnd, more := ws.next(nextStart)
		if mayNameProgram(w) {
			visitNamed(s, start, end, counted)
			if more && isOptionWord(s[nextStart:nextEnd]) && !leavesArgsAlone(w, s[nextStart:nextEnd]) {
				opts := wordSpans{s: s, argv: argv, i: i + 1}
				optionReadings(&opts, programName(w), nextStart, counted)
			}
		}
		if !more {
			break
		}
		start, end = nextStart, nextEnd
	}
	return budget >= 0
}

// visitNamed visits the reading that starts at the word s[start:end],
// taken by its program name.
func visitNamed(s string, start, end int, visit func(string)) {
	w := s[start:end]
	if i := strings.LastIndexByte(w, '/'); i >= 0 && i < len(w)-1 {
		start += i + 1
		w = w[i+1:]
	}
	if exeSuffix(w) > 0 {
		visit(programName(w) + s[end:])
		return
	}
	if sub, ok := gitSubcommandProgram(programName(w)); ok {
		visit("git " + sub + s[end:])
	}
	visit(s[start:])
}

// gitPushPlumbing are git's commands that push under another name: a
// rule about git push is about them too.
var gitPushPlumbing = setOf("send-pack", "http-push")

// gitPlumbing reads a command git send-pack ... as git push ...
// (docs/decisions.md#unlisted-launchers); ok is false for any other.
func gitPlumbing(r string) (string, bool) {
	rest, ok := strings.CutPrefix(r, "git ")
	if !ok {
		return "", false
	}
	sub, tail, _ := strings.Cut(rest, " ")
	if !gitPushPlumbing[sub] {
		return "", false
	}
	if tail == "" {
		return "git push", true
	}
	return "git push " + tail, true
}

// gitSubcommandProgram reads git's own programs for a subcommand
// (/usr/lib/git-core/git-push is git push): name is a program name.
func gitSubcommandProgram(name string) (string, bool) {
	sub, ok := strings.CutPrefix(name, "git-")
	return sub, ok && sub != "" && mayNameProgram(sub)
}

// optionReadings visits name followed by each word that the options after
// the program may leave as its subcommand: an option without = may take the
// next word as its value, so each such word is read both ways.
func optionReadings(ws *wordSpans, name string, start int, visit func(string)) {
	s := ws.s
	valueNext := false
	for n := 0; n < maxLaunchReadings; n++ {
		end, ok := ws.next(start)
		if !ok {
			return
		}
		w := s[start:end]
		switch {
		case isOptionWord(w):
			valueNext = w != "--" && strings.IndexByte(w, '=') < 0
		case !valueNext:
			visit(name + " " + s[start:])
			return
		default:
			visit(name + " " + s[start:])
			valueNext = false
		}
		start = end + 1
	}
}

// wordSpans finds the words of a command string: at its spaces, or by the
// lengths of argv when argv is given.
type wordSpans struct {
	s    string
	argv []string
	i    int // the next argv word
}

// next returns the end of the word that starts at start, or false when
// there is none.
func (ws *wordSpans) next(start int) (int, bool) {
	if start > len(ws.s) {
		return 0, false
	}
	if ws.argv != nil {
		if ws.i >= len(ws.argv) {
			return 0, false
		}
		end := start + len(ws.argv[ws.i])
		ws.i++
		if end > len(ws.s) {
			return 0, false
		}
		return end, true
	}
	if start == len(ws.s) {
		return 0, false
	}
	if i := strings.IndexByte(ws.s[start:], ' '); i >= 0 {
		return start + i, true
	}
	return len(ws.s), true
}

// LeavesArgsAlone reports whether a program, with the word after it, is
// known never to run a later word as a program (for tests and tools that
// grow tables from the host's programs).
func LeavesArgsAlone(program, next string) bool { return leavesArgsAlone(program, next) }

// ReadsExactly reports whether the analysis looks through a program as a
// wrapper or shell with its own options and operands (wrappers.go).
func ReadsExactly(program string) bool { return changesMeaning(programName(program)) }

// maxTailWords bounds the words Classify vouches for (TailsOnly): each gives at most
// one reading, far below maxLaunchReadings.
const maxTailWords = 64
