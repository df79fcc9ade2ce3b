package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Code in data (docs/decisions.md#code-in-data): bash evaluates some text
// as code although no $( is written around it. An array subscript is
// expanded wherever a name may carry one (test -v, [[ -v ]], let, (( )),
// the targets of declare, printf -v, read, unset), the prompt variables
// expand command substitutions, BASH_ENV and ENV name a file a shell
// sources, and an exported BASH_FUNC_name%% is a function definition. Each
// such text, as the command holds it after quotes and $'..' escapes, is
// read again as a script in the same shell, so a substitution inside it is
// found; text that cannot be read is unknown, as everywhere.

// dataScript reads a value that bash evaluates as code (a subscript, an
// arithmetic expression) again as a script, when it could run anything:
// when it holds a $ or a backquote.
func (w *walker) dataScript(text string) {
	if strings.ContainsAny(text, "$`") {
		// As the argument of a no-op, so that a[$(cmd)] parses as a word
		// whose substitution runs, as bash expands a subscript.
		w.reparse(": "+text, true, nil)
	}
}

// codeInArgs re-reads the arguments of the builtins that evaluate names and
// subscripts (the argv of one command, its program already a name).
func (w *walker) codeInArgs(argv []string) {
	args := argv[1:]
	switch programName(argv[0]) {
	case "test", "[":
		// Any operand with a subscript: the -v before it may be spelt so
		// that it is known only when the command runs ("$E"-v).
		for _, a := range args {
			if strings.Contains(a, "[") {
				w.dataScript(a)
			}
		}
	case "let":
		for _, a := range args {
			w.dataScript(a)
		}
	case "printf":
		for i, a := range args {
			if isOpt(a, "-v") && i+1 < len(args) {
				w.dataScript(args[i+1])
			} else if strings.HasPrefix(a, "-v") && len(a) > 2 {
				w.dataScript(a[2:])
			}
		}
	case "read", "mapfile", "readarray", "unset", "wait", "getopts", "declare", "typeset", "local", "export", "readonly":
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && strings.ContainsAny(a, "[") {
				w.dataScript(a)
			}
		}
	}
}

// codeInDecl re-reads what a declaration evaluates: the targets written
// with a subscript, and every value when it declares integers (-i).
func (w *walker) codeInDecl(words []string) {
	integers := slices.ContainsFunc(words[1:], func(o string) bool {
		return strings.HasPrefix(o, "-") && strings.ContainsRune(o, 'i')
	})
	for _, a := range words[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		if strings.Contains(name, "[") {
			w.dataScript(name)
		}
		if integers && hasValue {
			w.dataScript(value)
		}
	}
}

// codeVariables re-reads the assignments (NAME=value) that make a shell run
// code later: prompts expand substitutions, BASH_ENV and ENV name a file
// that a shell sources (unknown here), BASH_FUNC_name%% defines a function.
func (w *walker) codeVariables(assigns []string) {
	for _, as := range assigns {
		if name, value, ok := strings.Cut(as, "="); ok {
			w.codeVariable(name, value)
		}
	}
}

// codeVariable is codeVariables for one assignment.
func (w *walker) codeVariable(name, value string) {
	switch {
	case name == "PS0" || name == "PS1" || name == "PS2" || name == "PS3" || name == "PS4":
		w.dataScript(value)
	case name == "PROMPT_COMMAND":
		w.reparse(value, false, nil)
	case name == "BASH_ENV" || name == "ENV":
		if value != "" {
			w.a.UnknownCommand = true // a file some shell sources
		}
	case strings.HasPrefix(name, "BASH_FUNC_"):
		w.reparse("f"+value, false, nil)
	}
}

// arithWords re-reads the literal words of an arithmetic expression
// (let 'a[$(cmd)]=1', (( 'x' ))): their text is evaluated again.
func (w *walker) arithWords(n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		if word, ok := n.(*syntax.Word); ok {
			w.wordScript(word)
			if name, ok := simpleLit(word); ok && isEnvName(name) {
				// A name's value is evaluated as an expression in turn.
				if v, known := w.vars.lookup(name); known {
					w.dataScript(v)
				}
			}
			return false
		}
		return true
	})
}

// wordScript re-reads the text of a word that bash evaluates as code; a
// word with its own substitution is walked as it is written instead.
func (w *walker) wordScript(word *syntax.Word) {
	subst := false
	syntax.Walk(word, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			subst = true
		}
		return !subst
	})
	if !subst {
		w.dataScript(w.x.literal(word))
	}
}

// testVarSet re-reads the operand of every -v test in a [[ ]] clause.
func (w *walker) testVarSet(c *syntax.TestClause) {
	syntax.Walk(c, func(n syntax.Node) bool {
		if u, ok := n.(*syntax.UnaryTest); ok && u.Op == syntax.TsVarSet {
			if word, ok := u.X.(*syntax.Word); ok {
				w.wordScript(word)
			}
		}
		return true
	})
}

// isOpt reports whether a word is the option opt, or may be once its
// unknown parts are known ("$E"-v).
func isOpt(a, opt string) bool {
	return a == opt || HasUnknown(a) && strings.ReplaceAll(a, UnknownMark, "") == opt
}
