package shell

import (
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolgate/toolgate/internal/ascii"
)

// Analysis is what Analyze found in a shell command: every simple
// command (also inside substitutions, function bodies and script text given
// to another shell), its normalized forms, and the words that name paths.
// Words are expanded as bash would expand them statically; a part that
// cannot be known is UnknownMark.
type Analysis struct {
	// Commands are the simple commands, each as its expanded words, as
	// written (wrappers kept).
	Commands [][]string
	// Normalized are the normalized commands (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm): for every
	// simple command and every wrapper it runs through, the program by its
	// base name and the expanded words joined by single spaces, so that
	// `nice -n 5 sudo /bin/rm -rf '/'` gives "nice -n 5 sudo /bin/rm -rf /",
	// "sudo /bin/rm -rf /" and "rm -rf /". Each appears once.
	Normalized []string
	// Argv are the words of Normalized[i] (Argv[i][0] is the base name).
	Argv [][]string
	// Paths are the path-like words, with ~ and $HOME expanded, in order of
	// appearance and not yet made absolute. A path with an unknown part
	// holds UnknownMark.
	Paths []string
	// Parsed is false when the script (or script text given to a shell in
	// it) does not parse; its words are still scanned as well as they can be.
	Parsed bool
	// UnknownCommand is set when a command name cannot be known statically
	// ($CMD args, $(echo rm) -rf /), or script text given to a shell holds
	// an unknown part or comes from a pipe.
	UnknownCommand bool
	// TooDeep is set when script text is nested deeper than
	// MaxReparseDepth, or wrappers deeper than the analysis follows.
	TooDeep bool
	// spent counts the work done, against maxAnalysisWork.
	spent int
}

// Opaque reports whether the analysis cannot vouch for what the command
// runs: an unknown command name or text beyond the re-parse depth. No allow
// rule or override allows such a command (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
func (a *Analysis) Opaque() bool { return a.UnknownCommand || a.TooDeep }

const (
	// maxParseBytes caps the script size given to the full parser; longer
	// text is scanned by the fallback splitter and reported as not parsed.
	maxParseBytes = 64 << 10
	// maxNesting caps the nesting of ( { and backticks (and the count of !)
	// given to the full parser, whose recursive descent would otherwise grow with the input.
	maxNesting = 200
)

// parseState is a bash parser and the reader it parses from; a
// syntax.Parser is not safe for concurrent use but is reusable, and making
// one (or a reader) allocates.
type parseState struct {
	p *syntax.Parser
	r strings.Reader
}

// parserPool holds parseStates.
var parserPool = sync.Pool{New: func() any {
	return &parseState{p: syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))}
}}

// parseBash parses text as bash with a pooled parser.
func parseBash(text string) (*syntax.File, error) {
	ps := parserPool.Get().(*parseState)
	ps.r.Reset(text)
	f, err := ps.p.Parse(&ps.r, "")
	ps.r.Reset("") // the pool keeps no command text alive
	parserPool.Put(ps)
	return f, err
}

// Analyze is AnalyzeEnv with only the home directory known.
func Analyze(cmd, home string) Analysis {
	return AnalyzeEnv(cmd, Env{Home: home})
}

// AnalyzeEnv finds the simple commands of a shell script and the
// path-like words in each: arguments, assignment values, redirect targets,
// and words inside $(...), backticks, process substitutions and script text
// given to another shell. Windows-looking text (drive
// letters, backslash separators) is read both with \ as a separator and as
// bash reads it, and both readings are kept when they differ.
func AnalyzeEnv(cmd string, env Env) Analysis {
	return *AnalyzeEnvRef(cmd, env)
}

// AnalyzeEnvRef is AnalyzeEnv's analysis by reference: it lives in the one
// allocation the analysis makes for its state, so handing it on costs no
// copy to the heap.
func AnalyzeEnvRef(cmd string, env Env) *Analysis {
	if !looksWindows(cmd) {
		return analyzeOnce(cmd, env)
	}
	win := analyzeOnce(strings.ReplaceAll(cmd, `\`, "/"), env)
	posix := analyzeOnce(cmd, env)
	if sameAnalysis(win, posix) {
		return win
	}
	merged := mergeAnalyses(*win, *posix)
	return &merged
}

func analyzeOnce(cmd string, env Env) (a *Analysis) {
	defer func() {
		// A bug in the walk must not take the server down nor pass a
		// command: the text is scanned word by word and counts as opaque.
		if r := recover(); r != nil {
			st := newAnalysisState(env, MaxReparseDepth)
			st.w.fallback(cmd)
			st.w.tooDeep()
			a = &st.a
		}
	}()
	return analyzeWalk(cmd, env)
}

// analyzeWalk is the analysis of one reading, without analyzeOnce's net
// (the fuzz target calls it to see any panic).
func analyzeWalk(cmd string, env Env) *Analysis {
	st := newAnalysisState(env, 0)
	st.a.Parsed = true
	if HasUnknown(cmd) {
		// No real command holds a NUL byte: the text stands for one that
		// is not known (a command argument that is not a string array).
		st.a.UnknownCommand = true
		st.w.addPath(UnreadPath)
		cmd = strings.ReplaceAll(cmd, UnknownMark, "$"+unknownName)
	}
	st.w.script(cmd)
	return &st.a
}

// sameAnalysis reports whether two readings found the same commands and
// paths.
func sameAnalysis(a, b *Analysis) bool {
	return a.Parsed == b.Parsed && a.UnknownCommand == b.UnknownCommand && a.TooDeep == b.TooDeep &&
		slices.Equal(a.Paths, b.Paths) && slices.Equal(a.Normalized, b.Normalized) &&
		slices.EqualFunc(a.Commands, b.Commands, slices.Equal)
}

// looksWindows reports whether cmd has Windows path syntax: a drive letter
// followed by \, or a word starting with .\, ..\ or \\host.
func looksWindows(cmd string) bool {
	i := strings.IndexByte(cmd, '\\')
	if i < 0 {
		return false
	}
	for ; i < len(cmd); i++ {
		if cmd[i] != '\\' {
			continue
		}
		if i >= 2 && cmd[i-1] == ':' && isASCIILetter(cmd[i-2]) && (i == 2 || !isWordByte(cmd[i-3])) {
			return true
		}
		start := i
		for start > 0 && cmd[start-1] == '.' {
			start--
		}
		dots := i - start
		if (dots == 1 || dots == 2) && (start == 0 || isWordBreak(cmd[start-1])) {
			return true
		}
		if i+2 < len(cmd) && cmd[i+1] == '\\' && isWordByte(cmd[i+2]) && (i == 0 || isWordBreak(cmd[i-1])) {
			return true
		}
	}
	return false
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isWordByte(c byte) bool {
	return isASCIILetter(c) || c >= '0' && c <= '9' || c == '_'
}

func isWordBreak(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '"', '\'', '=', '(', ';', '&', '|', '<', '>', ',':
		return true
	}
	return false
}

// nestingDepth returns the deepest nesting of ( and { in cmd, counting every
// backtick and ! as one more level (the parser recurses on each, as in
// [[ ! ! ! x ]]); it is an upper bound, blind to quoting.
func nestingDepth(cmd string) int {
	depth, deepest, ticks := 0, 0, 0
	for i := 0; i < len(cmd); i++ {
		switch cmd[i] {
		case '(', '{':
			depth++
		case ')', '}':
			if depth > 0 {
				depth--
			}
		case '`', '!':
			ticks++
			continue
		default:
			continue
		}
		if depth+ticks > deepest {
			deepest = depth + ticks
		}
	}
	if ticks > deepest {
		deepest = ticks
	}
	return deepest
}

// mergeAnalyses joins two readings of one script, keeping each path and
// normalized command once.
func mergeAnalyses(a, b Analysis) Analysis {
	out := Analysis{
		Parsed:         a.Parsed && b.Parsed,
		UnknownCommand: a.UnknownCommand || b.UnknownCommand,
		TooDeep:        a.TooDeep || b.TooDeep,
	}
	out.Commands = append(append(out.Commands, a.Commands...), b.Commands...)
	out.Normalized, out.Argv = a.Normalized, a.Argv
	for i, n := range b.Normalized {
		if !slices.Contains(out.Normalized, n) {
			out.Normalized = append(out.Normalized, n)
			out.Argv = append(out.Argv, b.Argv[i])
		}
	}
	seen := make(map[string]bool, len(a.Paths)+len(b.Paths))
	for _, p := range append(append([]string(nil), a.Paths...), b.Paths...) {
		if !seen[p] {
			seen[p] = true
			out.Paths = append(out.Paths, p)
		}
	}
	return out
}

// isBareHome reports whether a word is only $HOME or ${HOME}, quoted or not:
// like the reference, toolgate reads $HOME as a path only when a path
// follows it ($HOME/x), so `echo $HOME` names no path; a bare ~ does.
func isBareHome(word *syntax.Word) bool {
	if word == nil || len(word.Parts) == 0 {
		return false
	}
	parts := word.Parts
	if dq, ok := parts[0].(*syntax.DblQuoted); ok && len(parts) == 1 {
		parts = dq.Parts
	}
	if len(parts) != 1 {
		return false
	}
	pe, ok := parts[0].(*syntax.ParamExp)
	return ok && isPlainParam(pe, "HOME")
}

// isPlainParam reports whether pe is $name or ${name} with no operator.
func isPlainParam(pe *syntax.ParamExp, name string) bool {
	return pe.Param != nil && pe.Param.Value == name && !pe.Excl && !pe.Length && !pe.Width &&
		pe.Index == nil && pe.Slice == nil && pe.Repl == nil && pe.Exp == nil && pe.Names == 0
}

// unescape resolves the backslash escapes of a word part: a
// backslash-newline disappears; outside double quotes \x is x, inside them
// only \$ \` \" and \\ are escapes and any other backslash stays.
func unescape(s string, doubleQuoted bool) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch next := s[i+1]; {
			case next == '\n':
				i++
				continue
			case !doubleQuoted || strings.IndexByte("$`\"\\", next) >= 0:
				i++
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// splitShellWords splits on white space and shell operators, dropping quotes.
// onBreak is called at every command boundary.
func splitShellWords(cmd string, onBreak func()) []string {
	var words []string
	var b strings.Builder
	inWord := false
	emit := func() {
		if inWord {
			words = append(words, b.String())
			b.Reset()
			inWord = false
		}
	}
	var quote byte
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		if quote != 0 {
			if c == quote {
				quote = 0
				continue
			}
			b.WriteByte(c)
			continue
		}
		switch c {
		case '\'', '"':
			quote = c
			inWord = true
		case ' ', '\t':
			emit()
		case ';', '&', '|', '\n', '\r', '(', ')', '`', '<', '>', '{', '}':
			emit()
			onBreak()
		case '$':
			if i+1 < len(cmd) && cmd[i+1] == '(' {
				emit()
				onBreak()
				i++
				continue
			}
			b.WriteByte(c)
			inWord = true
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	emit()
	return words
}

// NeedsFullParse reports whether cmd needs Analyze. It is false for a
// command that is its own normalized form and whose paths PathWord finds
// word by word: only plain words (letters, digits, spaces and the
// characters -_./:,=+@%^, so no quotes, expansions, escapes, ~, operators,
// globs, braces or newlines), single spaces, and a first word that is a
// bare program name (no / or =) other than a wrapper or cd.
func NeedsFullParse(cmd string) bool { return Classify(cmd).Full }

// plainShape reports whether a command is plain text: only plainByte
// bytes, single spaces between words, none leading (the first word is the
// program: " sudo x" is not plain).
func plainShape(cmd string) bool {
	if cmd != "" && cmd[0] == ' ' {
		return false
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		if !plainByte[c] || c == ' ' && i+1 < len(cmd) && cmd[i+1] == ' ' {
			return false
		}
	}
	return true
}

// untidyText reports whether a plain command has a path that is not clean
// (//, /./, /../, a trailing / or /.): its normalized form cleans it, so that
// rm -rf // meets the rules for rm -rf /.
func untidyText(cmd string) bool {
	for i := strings.IndexByte(cmd, '/'); i >= 0; {
		rest := cmd[i+1:]
		if rest == "" || rest[0] == '/' || rest[0] == ' ' || rest[0] == '.' && (len(rest) == 1 || rest[1] == '/' || rest[1] == ' ' ||
			rest[1] == '.' && (len(rest) == 2 || rest[2] == '/' || rest[2] == ' ')) {
			return true
		}
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// changesMeaning reports whether a plain command name makes the command
// mean more than its words: a wrapper (the command it runs is matched on its
// own) or cd (its operand is a directory even without a slash).
func changesMeaning(name string) bool { return lookupProgram(name).wrapper }

// plainByte marks the bytes NeedsFullParse accepts.
var plainByte = ascii.AlnumAnd(" -_./:,=+@%^")

// PathWord reports whether a shell word names a path, and returns it with ~
// and $HOME expanded. A path-like word contains / or \, is . or .., starts
// with ~ or $HOME/, or starts with a drive letter; URLs and a bare $HOME (as
// in `echo $HOME`, which the reference does not count) are not paths. For an
// option, the value after = (or from the first path start) is taken.
func PathWord(w, home string) (string, bool) {
	if w == "$HOME" || w == "${HOME}" {
		return "", false
	}
	p, ok := pathLike(w)
	if !ok {
		return "", false
	}
	return expandHome(p, home), true
}

// pathLike reports whether a word (as written, or expanded) names a path and
// returns the path part: the value of NAME=value or of an option.
func pathLike(w string) (string, bool) {
	if !mayHoldPath(w) {
		return "", false
	}
	if strings.HasPrefix(w, "-") {
		if i := strings.IndexByte(w, '='); i >= 0 {
			w = w[i+1:]
		} else if i := strings.IndexAny(w, `/\`); i >= 0 {
			// -I./include, -L../lib, -o~/out: back up over . and ~.
			for i > 1 && (w[i-1] == '.' || w[i-1] == '~') {
				i--
			}
			w = w[i:]
		} else {
			return "", false
		}
	} else if i := strings.IndexByte(w, '='); i > 0 && isEnvName(w[:i]) {
		w = w[i+1:]
	}
	if w == "" || w == "$HOME" || w == "${HOME}" || IsNetworkURL(w) {
		return "", false
	}
	if w == "." || w == ".." || w[0] == '~' || strings.ContainsAny(w, `/\`) || hasDriveLetter(w) {
		return w, true
	}
	return "", false
}

// mayHoldPath reports whether a word has a byte that pathLike needs to
// call any part of it a path: / \ ~ : or the dots of . and ..; most words
// of a benign command have none and are passed over in one loop.
func mayHoldPath(w string) bool {
	for i := 0; i < len(w); i++ {
		if pathBytes[w[i]] {
			return true
		}
	}
	return false
}

var pathBytes = func() (t [256]bool) {
	for _, c := range []byte(`/\~:.`) {
		t[c] = true
	}
	return t
}()

// ShortOptionValue returns the value attached to a one-letter option when
// it may be a path (-osecrets/k is -o secrets/k; -o~/x is -o ~/x): a
// second reading beside pathLike's, which takes a cluster of flags before
// a path (-xvf/tmp/a.tar) instead. Closed-world, both are judged.
func ShortOptionValue(w string) (string, bool) {
	if len(w) < 3 || w[0] != '-' || w[1] == '-' || strings.IndexByte(w, '=') >= 0 {
		return "", false
	}
	v := w[2:]
	if strings.ContainsAny(v, `/\`) || v[0] == '~' {
		if p, ok := pathLike(v); ok && p != "" {
			return p, true
		}
	}
	return "", false
}

func isEnvName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// expandHome replaces a leading ~, $HOME or ${HOME} with home. ~user names
// another user's home: /root for root, else a sibling of home, which is
// outside any workspace under home as the real one would be.
func expandHome(w, home string) string {
	if home == "" {
		return w
	}
	for _, prefix := range [...]string{"~", "$HOME", "${HOME}"} {
		if w == prefix {
			return home
		}
		if strings.HasPrefix(w, prefix) && (w[len(prefix)] == '/' || w[len(prefix)] == '\\') {
			return home + w[len(prefix):]
		}
	}
	if len(w) > 1 && w[0] == '~' && isUserNameByte(w[1]) {
		end := 1
		for end < len(w) && isUserNameByte(w[end]) {
			end++
		}
		if end == len(w) || w[end] == '/' || w[end] == '\\' {
			user := w[1:end]
			if user == "root" {
				return "/root" + w[end:]
			}
			parent := home
			if i := strings.LastIndexAny(strings.TrimRight(home, `/\`), `/\`); i >= 0 {
				parent = home[:i]
			}
			return parent + "/" + user + w[end:]
		}
	}
	return w
}

func isUserNameByte(c byte) bool {
	return isWordByte(c) || c == '-' || c == '.'
}

// isURL reports whether s starts with scheme://.
func isURL(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := s[j]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !(letter || j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// hasDriveLetter reports whether s starts with a Windows drive letter and a
// colon, such as C: or c:\.
func hasDriveLetter(s string) bool {
	return len(s) >= 2 && s[1] == ':' && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}
