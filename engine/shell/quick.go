package shell

import "mvdan.cc/sh/v3/syntax"

// quickTree is the syntax tree of a plain list (quickParse), made in one
// allocation. Its literals are parts of the script text. It is never
// reused: the walk's results may refer into it.
type quickTree struct {
	file  syntax.File
	top   [quickCommands]*syntax.Stmt
	stmts [2 * quickCommands]syntax.Stmt
	bins  [quickCommands]syntax.BinaryCmd
	calls [quickCommands]syntax.CallExpr
	args  [quickWords]*syntax.Word
	words [quickWords]syntax.Word
	parts [quickWords]syntax.WordPart
	lits  [quickWords]syntax.Lit
	// nStmts, nBins, nCalls and nWords count the nodes handed out.
	nStmts, nBins, nCalls, nWords int
}

const (
	// quickCommands and quickWords bound the simple commands and words of
	// a plain list that quickParse reads; a longer one goes to the parser.
	quickCommands = 8
	quickWords    = 32
)

// quickParse reads a plain list without the bash parser: simple commands
// of plain words (the bytes of NeedsFullParse's plain commands) separated
// by single spaces, joined by " && ", " || ", " | " and "; ". It gives the
// tree the parser gives for such text, position for position (a test and
// a fuzz target hold it to that), in one allocation instead of one for
// every node and word. Anything else (a reserved word or declaration
// builtin as a command, an assignment, other spacing or operators) is
// not read: ok is false and the parser reads it.
func quickParse(text string) (*syntax.File, bool) {
	cmds, words, ok := quickShape(text)
	if !ok || cmds > quickCommands || words > quickWords {
		return nil, false
	}
	t := &quickTree{}
	q := quickReader{t: t, text: text}
	t.file.Stmts = t.top[:0]
	for {
		s := q.andOr()
		t.file.Stmts = append(t.file.Stmts, s)
		if q.i == len(text) {
			return &t.file, true
		}
		// "; ": the list goes on.
		s.Semicolon = q.pos(q.i)
		q.i += 2
	}
}

// quickShape checks that text is a plain list and counts its simple
// commands and words.
func quickShape(text string) (cmds, words int, ok bool) {
	i := 0
	for {
		// A simple command: words separated by single spaces, the first
		// one not a reserved word, a declaration or an assignment.
		start := i
		for i < len(text) && text[i] != ' ' && text[i] != ';' {
			if !plainByte[text[i]] {
				return 0, 0, false
			}
			i++
		}
		if i == start || !quickCommandName(text[start:i]) {
			return 0, 0, false
		}
		cmds++
		words++
		for {
			if i == len(text) {
				return cmds, words, true
			}
			if op := quickOperator(text[i:]); op > 0 {
				i += op
				break
			}
			if text[i] != ' ' {
				return 0, 0, false
			}
			i++
			start := i
			for i < len(text) && text[i] != ' ' && text[i] != ';' {
				if !plainByte[text[i]] {
					return 0, 0, false
				}
				i++
			}
			if i == start || quickOperatorWord(text[start:i]) {
				return 0, 0, false
			}
			words++
		}
	}
}

// quickOperator is the length of the operator that s starts with (" && ",
// " || ", " | " or "; "), or 0.
func quickOperator(s string) int {
	switch {
	case len(s) >= 4 && (s[:4] == " && " || s[:4] == " || "):
		return 4
	case len(s) >= 3 && s[:3] == " | ":
		return 3
	case len(s) >= 2 && s[:2] == "; ":
		return 2
	}
	return 0
}

// quickOperatorWord reports whether a word between spaces is an operator
// quickShape does not take alone (a stray & or |, which are not plain
// bytes anyway: kept for clarity of the rule).
func quickOperatorWord(w string) bool { return w == "&&" || w == "||" || w == "|" }

// quickCommandName reports whether a plain word in command position is
// read by the parser as a simple command's name: not a reserved word, a
// builtin the parser reads apart, nor an assignment.
func quickCommandName(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] == '=' {
			return false
		}
	}
	switch w {
	case "if", "then", "elif", "else", "fi", "for", "in", "while", "until", "do", "done",
		"case", "esac", "select", "function", "time", "coproc", "let",
		"declare", "local", "export", "readonly", "typeset", "nameref":
		return false
	}
	return true
}

// quickReader builds a quickTree from text that quickShape accepted.
type quickReader struct {
	t    *quickTree
	text string
	i    int
}

// pos is the position of byte offset i (the text is one line).
func (q *quickReader) pos(i int) syntax.Pos { return syntax.NewPos(uint(i), 1, uint(i)+1) }

func (q *quickReader) stmt(at int) *syntax.Stmt {
	s := &q.t.stmts[q.t.nStmts]
	q.t.nStmts++
	s.Position = q.pos(at)
	return s
}

// andOr reads pipelines joined by && and ||, left to right, as the parser
// nests them: ((a && b) || c).
func (q *quickReader) andOr() *syntax.Stmt {
	s := q.pipeline()
	for op := q.op(); op == " && " || op == " || "; op = q.op() {
		b := q.binary(s, op)
		q.i += len(op)
		b.Y = q.pipeline()
		s = q.stmt(int(s.Position.Offset()))
		s.Cmd = b
	}
	return s
}

// pipeline reads simple commands joined by |, nested as the parser does:
// ((a | b) | c).
func (q *quickReader) pipeline() *syntax.Stmt {
	s := q.call()
	for q.op() == " | " {
		b := q.binary(s, " | ")
		q.i += 3
		b.Y = q.call()
		s = q.stmt(int(s.Position.Offset()))
		s.Cmd = b
	}
	return s
}

// op is the operator at the reader's place, or "".
func (q *quickReader) op() string {
	if n := quickOperator(q.text[q.i:]); n > 0 {
		return q.text[q.i : q.i+n]
	}
	return ""
}

func (q *quickReader) binary(x *syntax.Stmt, op string) *syntax.BinaryCmd {
	b := &q.t.bins[q.t.nBins]
	q.t.nBins++
	b.X = x
	switch op {
	case " && ":
		b.Op, b.OpPos = syntax.AndStmt, q.pos(q.i+1)
	case " || ":
		b.Op, b.OpPos = syntax.OrStmt, q.pos(q.i+1)
	default:
		b.Op, b.OpPos = syntax.Pipe, q.pos(q.i+1)
	}
	return b
}

// call reads one simple command: its words up to an operator or the end.
func (q *quickReader) call() *syntax.Stmt {
	s := q.stmt(q.i)
	c := &q.t.calls[q.t.nCalls]
	q.t.nCalls++
	first := q.t.nWords
	for {
		start := q.i
		for q.i < len(q.text) && q.text[q.i] != ' ' && q.text[q.i] != ';' {
			q.i++
		}
		n := q.t.nWords
		q.t.nWords++
		l := &q.t.lits[n]
		l.ValuePos, l.ValueEnd, l.Value = q.pos(start), q.pos(q.i), q.text[start:q.i]
		q.t.parts[n] = l
		q.t.words[n].Parts = q.t.parts[n : n+1 : n+1]
		q.t.args[n] = &q.t.words[n]
		if q.i == len(q.text) || q.op() != "" {
			break
		}
		q.i++ // the space between words
	}
	c.Args = q.t.args[first:q.t.nWords:q.t.nWords]
	s.Cmd = c
	return s
}
