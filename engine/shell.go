package engine

import "strings"

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

// AnalyzeShell finds the simple commands of a shell script and the path-like
// words in each: arguments, redirect targets, and words inside $(...),
// backticks and process substitutions (contract D2). home expands ~ and $HOME.
func AnalyzeShell(cmd, home string) ShellAnalysis {
	var a ShellAnalysis
	a.Parsed = true
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
		case ';', '&', '|', '\n', '\r', '(', ')', '`', '<', '>':
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

// PathWord reports whether a shell word names a path, and returns it with ~
// and $HOME expanded. A path-like word contains / or \, is . or .., starts
// with ~ or $HOME, or starts with a drive letter; URLs are not paths. For an
// option, the value after = (or from the first /) is taken.
func PathWord(w, home string) (string, bool) {
	if strings.HasPrefix(w, "-") {
		if i := strings.IndexByte(w, '='); i >= 0 {
			w = w[i+1:]
		} else if i := strings.IndexByte(w, '/'); i >= 0 {
			w = w[i:]
		} else {
			return "", false
		}
	} else if i := strings.IndexByte(w, '='); i > 0 && isEnvName(w[:i]) {
		w = w[i+1:]
	}
	if w == "" || isURL(w) {
		return "", false
	}
	w = expandHome(w, home)
	if w == "." || w == ".." || strings.ContainsAny(w, `/\`) || hasDriveLetter(w) {
		return w, true
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

// expandHome replaces a leading ~, $HOME or ${HOME} with home.
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
	return w
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
