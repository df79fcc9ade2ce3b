package shell

import (
	"reflect"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// parseFull is the bash parser's tree of text.
func parseFull(t testing.TB, text string) (*syntax.File, error) {
	t.Helper()
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false)).Parse(strings.NewReader(text), "")
}

// checkQuick fails when quickParse reads text into another tree than the
// parser's (positions included): the walk would then read it otherwise.
func checkQuick(t testing.TB, text string) bool {
	t.Helper()
	got, ok := quickParse(text)
	if !ok {
		return false
	}
	want, err := parseFull(t, text)
	if err != nil {
		t.Fatalf("%q: quickParse read text the parser refuses (%v)", text, err)
	}
	if !reflect.DeepEqual(got, want) {
		var g, w strings.Builder
		syntax.DebugPrint(&g, got)
		syntax.DebugPrint(&w, want)
		t.Fatalf("%q: quickParse tree differs from the parser's:\n%s\nwant:\n%s", text, g.String(), w.String())
	}
	return true
}

// TestQuickParse: plain lists are read without the parser into the
// parser's tree; anything else is left to the parser.
func TestQuickParse(t *testing.T) {
	for _, c := range []struct {
		note, text string
		quick      bool
	}{
		{"one word", "ls", true},
		{"one command", "make deploy --fast", true},
		{"and", "make deploy --fast && git status", true},
		{"or, and, left to right", "a && b || c && d", true},
		{"pipes, left to right", "a x | b y | c z", true},
		{"pipes inside and lists", "a | b && c | d || e", true},
		{"semicolons", "cd src; go vet ./...; echo done", true},
		{"all operators", "a -x | b && c || d; e | f", true},
		{"plain bytes", "curl http://example.com:80/a,b+c@d%e^f=g", true},
		{"assignment-like word after the name", "env A=b", true},
		{"reserved word named later", "echo if then fi", true},
		{"reserved word as a command", "echo a && if", false},
		{"declaration builtin", "export A=b", false},
		{"time keyword", "time make", false},
		{"assignment", "A=b make", false},
		{"two spaces", "a  b", false},
		{"leading space", " a", false},
		{"trailing space", "a ", false},
		{"trailing semicolon", "a;", false},
		{"semicolon without space", "a;b", false},
		{"background", "a & b", false},
		{"operator without spaces", "a&&b", false},
		{"operator at the end", "a &&", false},
		{"quote", "echo 'a'", false},
		{"expansion", "echo $HOME", false},
		{"glob", "ls *.go", false},
		{"tilde", "ls ~", false},
		{"redirect", "echo a > b", false},
		{"newline", "a\nb", false},
		{"empty", "", false},
		{"too many commands", strings.Repeat("a; ", quickCommands) + "a", false},
		{"as many commands as it takes", strings.Repeat("a; ", quickCommands-1) + "a", true},
		{"too many words", "a" + strings.Repeat(" b", quickWords), false},
		{"a line longer than a column number holds", "echo " + strings.Repeat("x", 70000) + " && ls y", true},
	} {
		if got := checkQuick(t, c.text); got != c.quick {
			t.Errorf("%s: %q read quickly: %v, want %v", c.note, c.text, got, c.quick)
		}
	}
}

// TestQuickParseTooLong: text past maxParseBytes is scanned word by word
// and reported as not parsed, plain or not.
func TestQuickParseTooLong(t *testing.T) {
	a := Analyze("echo "+strings.Repeat("x", maxParseBytes)+" && ls", testHome)
	if a.Parsed {
		t.Error("text past maxParseBytes reported as parsed")
	}
}

// FuzzQuickParse: whatever quickParse reads, it reads into the parser's tree.
func FuzzQuickParse(f *testing.F) {
	for _, s := range []string{"make deploy --fast && git status", "a | b || c; d", "cd src; go vet ./... | tee vet.log",
		"echo a=b && x", "ls -la /tmp", "a && b | c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) { checkQuick(t, text) })
}

// TestQuickParseGenerated: lists made of words that sit on the edges of the
// plain grammar (reserved words, assignments, option and path shapes) in
// every place, joined by every operator, read into the parser's tree or
// not at all.
func TestQuickParseGenerated(t *testing.T) {
	words := []string{"a", "ls", "-la", "/tmp/x", "./...", "..", ".", "if", "then", "fi", "in", "do", "done", "esac",
		"else", "elif", "case", "for", "while", "until", "select", "function", "time", "coproc", "let", "export",
		"declare", "local", "readonly", "typeset", "nameref", "A=b", "a+=b", "--x=y", "=", "1", "%1", "^x", "@x",
		"+x", ":", "x,y", "http://h:1/p", "{", "}", "!", "[[", "]]", "&", "|"}
	ops := []string{" && ", " || ", " | ", "; ", " ", "  ", ";", " & "}
	seed := uint64(1)
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	quick := 0
	for range 20000 {
		var b strings.Builder
		for j := range 1 + next(6) {
			if j > 0 {
				b.WriteString(ops[next(len(ops))])
			}
			b.WriteString(words[next(len(words))])
		}
		if checkQuick(t, b.String()) {
			quick++
		}
	}
	if quick < 1000 {
		t.Errorf("only %d generated lists read quickly: the test no longer exercises quickParse", quick)
	}
}
