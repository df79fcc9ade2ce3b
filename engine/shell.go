package engine

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// ShellAnalysis is what AnalyzeShell found in a shell command: the simple
// commands and the words in them that name paths.
type ShellAnalysis struct {
	// Commands are the simple commands, each as its words (quotes removed).
	Commands [][]string
	// Paths are the path-like words, with ~ and $HOME expanded, in order of
	// appearance and not yet made absolute.
	Paths []string
	// Parsed is false when the script does not parse; such a script is risky
	// and its words are still scanned as well as they can be.
	Parsed bool
}

const (
	// maxParseBytes caps the script size given to the full parser; longer
	// text is scanned by the fallback splitter and reported as not parsed.
	maxParseBytes = 64 << 10
	// maxNesting caps the nesting of ( { and backticks (and the count of !)
	// given to the full parser, whose recursive descent would otherwise grow with the input.
	maxNesting = 200
)

// parserPool holds bash parsers; a syntax.Parser is not safe for concurrent
// use but is reusable, and making one allocates.
var parserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
}}

// AnalyzeShell finds the simple commands of a shell script and the path-like
// words in each: arguments, assignment values, redirect targets, and words
// inside $(...), backticks and process substitutions (contract D2). home
// expands ~ and $HOME. Windows command text (drive letters, backslash
// separators) is read with \ as a path separator, not as an escape.
func AnalyzeShell(cmd, home string) ShellAnalysis {
	if len(cmd) > maxParseBytes || nestingDepth(cmd) > maxNesting {
		return fallbackAnalysis(cmd, home)
	}
	if !looksWindows(cmd) {
		a, ok := parseAnalysis(cmd, home)
		if !ok {
			return fallbackAnalysis(cmd, home)
		}
		return a
	}
	// Windows text: \ is a separator. Parse a copy with \ as /, and also the
	// text as bash would read it. When both parse to the same number of
	// commands the backslashes were only separators; when they differ the
	// backslashes change the script's structure, so report both readings.
	slashed := strings.ReplaceAll(cmd, `\`, "/")
	win, winOK := parseAnalysis(slashed, home)
	posix, posixOK := parseAnalysis(cmd, home)
	switch {
	case winOK && posixOK && len(win.Commands) == len(posix.Commands):
		return win
	case winOK && posixOK:
		return mergeAnalyses(win, posix)
	case winOK:
		return win
	case posixOK:
		return posix
	}
	return fallbackAnalysis(slashed, home)
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

// mergeAnalyses joins two readings of one script, keeping each path once.
func mergeAnalyses(a, b ShellAnalysis) ShellAnalysis {
	out := ShellAnalysis{Parsed: a.Parsed && b.Parsed}
	out.Commands = append(append(out.Commands, a.Commands...), b.Commands...)
	seen := make(map[string]bool, len(a.Paths)+len(b.Paths))
	for _, p := range append(append([]string(nil), a.Paths...), b.Paths...) {
		if !seen[p] {
			seen[p] = true
			out.Paths = append(out.Paths, p)
		}
	}
	return out
}

// parseAnalysis parses cmd as bash and walks the tree; ok is false when the
// text does not parse.
func parseAnalysis(cmd, home string) (a ShellAnalysis, ok bool) {
	p := parserPool.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(cmd), "")
	parserPool.Put(p)
	if err != nil {
		return ShellAnalysis{}, false
	}
	w := shellWalker{src: cmd, home: home}
	syntax.Walk(f, w.visit)
	w.a.Parsed = true
	return w.a, true
}

// shellWalker collects commands and paths while syntax.Walk visits the tree.
type shellWalker struct {
	src  string
	home string
	a    ShellAnalysis
	// skip holds words not to judge again: here-document bodies and
	// delimiters (data, not paths) and assignment values (judged whole).
	skip []*syntax.Word
}

func (w *shellWalker) visit(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.CallExpr:
		if len(n.Args) > 0 {
			words := make([]string, len(n.Args))
			for i, arg := range n.Args {
				words[i] = w.wordText(arg)
			}
			w.a.Commands = append(w.a.Commands, words)
		}
	case *syntax.DeclClause:
		words := []string{n.Variant.Value}
		for _, as := range n.Args {
			words = append(words, w.assignText(as))
		}
		w.a.Commands = append(w.a.Commands, words)
	case *syntax.Redirect:
		if n.Hdoc != nil {
			w.skip = append(w.skip, n.Hdoc)
		}
		if n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc {
			// The word after << is the delimiter, not a path.
			w.skip = append(w.skip, n.Word)
		}
	case *syntax.Assign:
		// NAME=value is judged whole, as the fast path judges the word.
		if n.Name != nil && n.Value != nil && !n.Naked {
			w.skip = append(w.skip, n.Value)
			if !startsDynamic(n.Value) {
				if p, ok := PathWord(n.Name.Value+"="+w.wordText(n.Value), w.home); ok {
					w.a.Paths = append(w.a.Paths, p)
				}
			}
		}
	case *syntax.Word:
		for _, s := range w.skip {
			if s == n {
				return true
			}
		}
		if startsDynamic(n) || isBareHome(n) {
			return true
		}
		if p, ok := PathWord(w.wordText(n), w.home); ok {
			w.a.Paths = append(w.a.Paths, p)
		}
	}
	return true
}

// isBareHome reports whether a word is only $HOME or ${HOME}, quoted or not:
// like the reference, toolgate reads $HOME as a path only when a path
// follows it ($HOME/x), so `echo $HOME` names no path; a bare ~ does.
func isBareHome(word *syntax.Word) bool {
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

// startsDynamic reports whether a word begins with an expansion whose value
// is not known here: a command or process substitution (the commands inside
// are analysed on their own), arithmetic, or a parameter other than HOME
// (a default value inside it is a word of its own).
func startsDynamic(word *syntax.Word) bool {
	part := word.Parts[0]
	if dq, ok := part.(*syntax.DblQuoted); ok {
		if len(dq.Parts) == 0 {
			return false
		}
		part = dq.Parts[0]
	}
	switch part := part.(type) {
	case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
		return true
	case *syntax.ParamExp:
		return !isPlainParam(part, "HOME")
	}
	return false
}

func (w *shellWalker) assignText(as *syntax.Assign) string {
	var b strings.Builder
	if as.Name != nil {
		b.WriteString(as.Name.Value)
		if !as.Naked {
			b.WriteByte('=')
		}
	}
	if as.Value != nil {
		b.WriteString(w.wordText(as.Value))
	}
	return b.String()
}

// wordText returns a word with quotes removed and escapes resolved; $HOME
// and ${HOME} become home, and other expansions keep their source text.
func (w *shellWalker) wordText(word *syntax.Word) string {
	if len(word.Parts) == 1 {
		if lit, ok := word.Parts[0].(*syntax.Lit); ok {
			return unescapeUnquoted(lit.Value)
		}
	}
	var b strings.Builder
	w.writeParts(&b, word.Parts, false)
	return b.String()
}

func (w *shellWalker) writeParts(b *strings.Builder, parts []syntax.WordPart, quoted bool) {
	for _, part := range parts {
		switch part := part.(type) {
		case *syntax.Lit:
			if quoted {
				b.WriteString(unescapeDoubleQuoted(part.Value))
			} else {
				b.WriteString(unescapeUnquoted(part.Value))
			}
		case *syntax.SglQuoted:
			b.WriteString(part.Value)
		case *syntax.DblQuoted:
			w.writeParts(b, part.Parts, true)
		case *syntax.ParamExp:
			if w.home != "" && isPlainParam(part, "HOME") {
				b.WriteString(w.home)
			} else {
				b.WriteString(w.source(part))
			}
		default:
			b.WriteString(w.source(part))
		}
	}
}

// isPlainParam reports whether pe is $name or ${name} with no operator.
func isPlainParam(pe *syntax.ParamExp, name string) bool {
	return pe.Param != nil && pe.Param.Value == name && !pe.Excl && !pe.Length && !pe.Width &&
		pe.Index == nil && pe.Slice == nil && pe.Repl == nil && pe.Exp == nil && pe.Names == 0
}

// source returns the text of a node as written.
func (w *shellWalker) source(n syntax.Node) string {
	start, end := n.Pos().Offset(), n.End().Offset()
	if start > end || end > uint(len(w.src)) {
		return ""
	}
	return w.src[start:end]
}

// unescapeUnquoted resolves backslash escapes outside quotes: \x is x, and
// a backslash-newline disappears.
func unescapeUnquoted(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDoubleQuoted resolves the escapes that double quotes honour:
// \$ \` \" \\ and backslash-newline.
func unescapeDoubleQuoted(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// fallbackAnalysis scans text that the parser will not take: the words are
// still split on operators and checked for paths, and Parsed is false.
func fallbackAnalysis(cmd, home string) ShellAnalysis {
	var a ShellAnalysis
	var current []string
	flush := func() {
		if len(current) > 0 {
			a.Commands = append(a.Commands, current)
			current = nil
		}
	}
	for _, w := range splitShellWords(cmd, flush) {
		current = append(current, w)
		if p, ok := PathWord(w, home); ok {
			a.Paths = append(a.Paths, p)
		}
	}
	flush()
	return a
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

// NeedsFullParse reports whether cmd needs AnalyzeShell. It is false for a
// command made only of plain words: letters, digits, spaces and the
// characters -_./:,=+@%^ — no quotes, expansions, escapes, ~, operators,
// globs, braces or newlines. Such a command is its space-separated words,
// each of which PathWord can judge alone.
func NeedsFullParse(cmd string) bool {
	for i := 0; i < len(cmd); i++ {
		if !plainByte[cmd[i]] {
			return true
		}
	}
	return false
}

// plainByte marks the bytes NeedsFullParse accepts.
var plainByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range " -_./:,=+@%^" {
		t[c] = true
	}
	return t
}()

// PathWord reports whether a shell word names a path, and returns it with ~
// and $HOME expanded. A path-like word contains / or \, is . or .., starts
// with ~ or $HOME/, or starts with a drive letter; URLs and a bare $HOME (as
// in `echo $HOME`, which the reference does not count) are not paths. For an
// option, the value after = (or from the first path start) is taken.
func PathWord(w, home string) (string, bool) {
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
	if w == "" || w == "$HOME" || w == "${HOME}" || isURL(w) {
		return "", false
	}
	// Path-likeness is judged on the word as written: a bare $HOME or
	// ${HOME} (echo $HOME) names no file, while ~, ~/x and $HOME/x do.
	if w == "." || w == ".." || w[0] == '~' || strings.ContainsAny(w, `/\`) || hasDriveLetter(w) {
		return expandHome(w, home), true
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
