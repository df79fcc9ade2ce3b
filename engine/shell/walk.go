package shell

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// MaxReparseDepth bounds how deep script text given to another shell (eval,
// sh -c, su -c, env -S, a here-string fed to bash ...) is read again. Text
// nested deeper is not read: the analysis reports TooDeep, and no allow
// rule or override allows such a command.
const MaxReparseDepth = 4

// maxAnalysisWork bounds the bytes of expanded words and re-read script
// text of one analysis (brace expansion and re-parsing can multiply the
// input); past it the analysis reports TooDeep.
const maxAnalysisWork = 1 << 20

// unknownName is a variable name that is never known: script text that
// holds an unknown part is read again with that part written as $unknownName.
const unknownName = "__toolgate_unknown__"

// UnreadPath is the path an analysis holds when script text was not read:
// nested past MaxReparseDepth or the work budget, or text with an unknown
// part (eval "$X", curl ... | sh) given to a shell. Such text may name any
// path, so it counts as an unknown, external path (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm): the
// external-directory level applies as for a word with an unknown part.
const UnreadPath = UnknownMark + "/(script text not read)"

// stdinState is where a statement's standard input comes from.
type stdinState struct {
	piped bool   // a pipe: the text is not known
	file  bool   // a < redirect from a file: the text is not known
	text  string // a here-document or here-string: the text, expanded
	has   bool   // text is set
}

// walker walks one script in execution order, keeping the variables it
// assigns, and fills the analysis.
type walker struct {
	a     *Analysis
	vars  *shellVars
	x     *expander
	depth int // how many times this text was handed to another shell
	// cond > 0 inside a construct that may or may not run, or runs in a
	// subshell: an assignment there leaves its variable unknown.
	cond int
	in   stdinState
	// inPipe is set for the right side of a pipe while its statement starts.
	inPipe bool
	// timed is set for the simple command of a time keyword.
	timed bool
	// echoed (a printf) or echoArgs (an echo) is what the last simple
	// command wrote when it was an echo or printf of known text
	// (echoKnown); pipeText is that text fed to the right side of a pipe.
	echoed, pipeText     string
	echoArgs             []string
	echoKnown, pipeKnown bool
	root                 *syntax.File
	// slab, when set, backs the lists of a (it is a's alone: a walker of
	// another Analysis never gets it).
	slab *analysisSlab
	// src is the script text being walked, and span the text of the last
	// simple command's words in it: a normalized command equal to a part
	// of span is that part, not a new string.
	src, span string
}

func newWalker(a *Analysis, vars *shellVars, depth int) *walker {
	return &walker{a: a, vars: vars, x: newExpander(vars), depth: depth}
}

func (w *walker) file(f *syntax.File) {
	w.root = f
	w.stmts(f.Stmts)
}

func (w *walker) stmts(list []*syntax.Stmt) {
	for _, s := range list {
		w.stmt(s)
	}
}

func (w *walker) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	saved := w.in
	if w.inPipe {
		w.in = stdinState{piped: true}
		if w.pipeKnown {
			w.in = stdinState{text: w.pipeText, has: true}
		}
		w.inPipe, w.pipeKnown = false, false
	}
	for _, r := range s.Redirs {
		w.redirect(r)
	}
	if s.Background || s.Coprocess {
		w.cond++
		defer func() { w.cond-- }()
	}
	w.cmd(s.Cmd)
	w.in = saved
}

// redirect judges a redirect's target as a path and records what a here
// document or here-string feeds to the command's standard input.
func (w *walker) redirect(r *syntax.Redirect) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if r.Hdoc == nil {
			return
		}
		if quotedDelim(r.Word) {
			w.in = stdinState{text: roughText(r.Hdoc), has: true}
			return
		}
		w.substs(r.Hdoc)
		w.in = stdinState{text: w.x.document(r.Hdoc), has: true}
	case syntax.WordHdoc:
		if r.Word == nil {
			return
		}
		w.substs(r.Word)
		w.in = stdinState{text: w.x.literal(r.Word) + "\n", has: true}
	default:
		if r.Word == nil {
			return
		}
		if r.Op == syntax.RdrIn || r.Op == syntax.RdrInOut {
			w.in = stdinState{file: true}
		}
		if r.Op == syntax.DplIn || r.Op == syntax.DplOut {
			// >&2, <&0: a file descriptor, not a path.
			w.substs(r.Word)
			return
		}
		// A redirect target is a file even when it is only unknown (> $F).
		for _, f := range w.expandWord(r.Word, nil) {
			if onlyUnknown(f) {
				w.addPath(f)
			} else {
				w.fieldPath(f)
			}
		}
	}
}

// quotedDelim reports whether a here-document delimiter is quoted, which
// keeps the body from being expanded.
func quotedDelim(word *syntax.Word) bool {
	if word == nil {
		return false
	}
	for _, p := range word.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.IndexByte(p.Value, '\\') >= 0 {
				return true
			}
		}
	}
	return false
}

func (w *walker) cmd(c syntax.Command) {
	switch c := c.(type) {
	case nil:
	case *syntax.CallExpr:
		w.call(c)
	case *syntax.DeclClause:
		w.decl(c)
	case *syntax.BinaryCmd:
		if c.Op == syntax.AndStmt || c.Op == syntax.OrStmt {
			w.stmt(c.X)
			if c.Op == syntax.AndStmt && pureAssign(c.X) {
				// A=x && B=y: an assignment without substitutions does
				// not fail, so the right side runs.
				w.stmt(c.Y)
				return
			}
			w.cond++
			w.stmt(c.Y)
			w.cond--
			return
		}
		w.cond++
		w.echoKnown = false
		w.stmt(c.X)
		w.inPipe = true
		if w.echoKnown && isSimple(c.X) {
			w.pipeText, w.pipeKnown = w.echoText(), true
		}
		w.stmt(c.Y)
		w.inPipe, w.pipeKnown = false, false
		w.cond--
	case *syntax.Subshell:
		w.subshell(c.Stmts)
	case *syntax.Block:
		w.stmts(c.Stmts)
	case *syntax.IfClause:
		w.ifClause(c)
	case *syntax.WhileClause:
		w.forgetAssigned(c)
		w.cond++
		w.stmts(c.Cond)
		w.stmts(c.Do)
		w.cond--
	case *syntax.ForClause:
		w.forgetAssigned(c)
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, item := range l.Items {
				w.wordPaths(item)
			}
			w.vars.forget(l.Name.Value)
		case *syntax.CStyleLoop:
			w.arith(l)
		}
		w.cond++
		w.stmts(c.Do)
		w.cond--
	case *syntax.CaseClause:
		w.wordPaths(c.Word)
		w.cond++
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				w.substs(p)
			}
			w.stmts(item.Stmts)
		}
		w.cond--
	case *syntax.FuncDecl:
		w.funcBody(c)
	case *syntax.ArithmCmd:
		w.arith(c)
	case *syntax.LetClause:
		w.arith(c)
	case *syntax.TimeClause:
		// The time keyword runs a command like the time wrapper does:
		// let the wrapper table read its -p (even one spelt "$E"-p).
		if c.Stmt != nil && !c.PosixFormat {
			if _, ok := c.Stmt.Cmd.(*syntax.CallExpr); ok {
				w.timed = true
			}
		}
		w.stmt(c.Stmt)
		w.timed = false
	case *syntax.CoprocClause:
		w.cond++
		w.stmt(c.Stmt)
		w.cond--
	case *syntax.TestClause:
		w.testVarSet(c)
		w.judgeWords(c)
	default:
		// bats tests and anything newer: every word is judged.
		w.judgeWords(c)
	}
}

// judgeWords judges every word of a command node as a possible path.
func (w *walker) judgeWords(c syntax.Command) {
	syntax.Walk(c, func(n syntax.Node) bool {
		if word, ok := n.(*syntax.Word); ok {
			w.wordPaths(word)
			return false
		}
		return true
	})
}

func (w *walker) ifClause(c *syntax.IfClause) {
	w.stmts(c.Cond)
	w.cond++
	w.stmts(c.Then)
	if c.Else != nil {
		w.ifClause(c.Else)
	}
	w.cond--
}

// funcBody walks a function body: it runs when called, after assignments
// the walk may not have seen, so no variable assigned anywhere in the
// script is known inside it.
func (w *walker) funcBody(c *syntax.FuncDecl) {
	if w.vars.assigned == nil {
		w.vars.assigned = map[string]bool{}
		if w.root != nil {
			collectAssigned(w.root, w.vars.assigned)
		}
		w.vars.assigned["HOME"] = w.vars.assigned["HOME"] || w.vars.tainted
		w.vars.assigned["PWD"] = true // a cd anywhere may run before the call
	}
	w.vars.inFunc++
	w.cond++
	w.stmt(c.Body)
	w.cond--
	w.vars.inFunc--
}

// forgetAssigned makes every variable a loop body assigns unknown before the
// loop is walked: a later iteration sees the value of an earlier one.
func (w *walker) forgetAssigned(loop syntax.Node) {
	names := map[string]bool{}
	collectAssigned(loop, names)
	for name := range names {
		w.vars.forget(name)
	}
}

// collectAssigned records the names that assignments, declarations and
// variable-setting builtins below n may set.
func collectAssigned(n syntax.Node, names map[string]bool) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil {
				names[n.Name.Value] = true
			}
		case *syntax.CallExpr:
			for _, arg := range n.Args {
				if lit := arg.Lit(); lit != "" && isEnvName(lit) {
					names[lit] = true
				}
			}
		}
		return true
	})
}

// arith walks arithmetic: substitutions inside run, and every name in it may
// be assigned ((i++), let x=1).
func (w *walker) arith(n syntax.Node) {
	w.arithWords(n)
	syntax.Walk(n, func(n syntax.Node) bool {
		if w.enteredSubst(n) {
			return false
		}
		switch n := n.(type) {
		case *syntax.Lit:
			if isEnvName(n.Value) {
				w.vars.forget(n.Value)
			}
		case *syntax.ParamExp:
			if n.Param != nil && isEnvName(n.Param.Value) {
				w.vars.forget(n.Param.Value)
			}
		}
		return true
	})
}

// enteredSubst walks the commands of n when n is a command or process
// substitution, and reports whether it was one: the syntax walk stops
// there, as sub walked what is inside.
func (w *walker) enteredSubst(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.CmdSubst:
		w.sub(n.Stmts)
		return true
	case *syntax.ProcSubst:
		w.sub(n.Stmts)
		return true
	}
	return false
}

// sub walks the commands of a command or process substitution (a subshell).
func (w *walker) sub(stmts []*syntax.Stmt) {
	savedIn, savedPipe := w.in, w.inPipe
	w.in, w.inPipe = stdinState{}, false
	w.subshell(stmts)
	w.in, w.inPipe = savedIn, savedPipe
}

// subshell walks commands that run in a subshell: in order, so an
// assignment there is known to the commands after it (V=rm; $V -rf / is
// rm -rf / inside $(...) too), and with the variables put back after, as
// a subshell's assignments never reach its parent.
func (w *walker) subshell(stmts []*syntax.Stmt) {
	snap := w.vars.save()
	w.stmts(stmts)
	w.vars.restore(snap)
}

// substs walks the substitutions inside a word, and forgets variables that
// ${X:=v} or $((X=1)) assign.
func (w *walker) substs(word *syntax.Word) {
	if word == nil {
		return
	}
	for _, p := range word.Parts {
		if _, ok := p.(*syntax.Lit); !ok {
			goto walk
		}
	}
	return
walk:
	syntax.Walk(word, func(n syntax.Node) bool {
		if w.enteredSubst(n) {
			return false
		}
		switch n := n.(type) {
		case *syntax.ArithmExp:
			w.arith(n)
			return false
		case *syntax.ParamExp:
			if n.Exp != nil && n.Param != nil {
				switch n.Exp.Op {
				case syntax.AssignUnset, syntax.AssignUnsetOrNull:
					w.vars.forget(n.Param.Value)
				}
			}
		}
		return true
	})
}

// expandWord walks a word's substitutions and returns its fields, appended
// to out. A word cut at maxFieldsPerWord adds an unknown path.
func (w *walker) expandWord(word *syntax.Word, out []string) []string {
	w.substs(word)
	if w.a.spent > maxAnalysisWork {
		// Past the budget words are not expanded; the analysis no longer
		// vouches for the command.
		w.tooDeep()
		return append(out, roughText(word))
	}
	n := len(out)
	out, cut := w.x.fields(word, out)
	if cut {
		w.addPath(UnknownMark + "/" + roughText(word))
	}
	for _, f := range out[n:] {
		w.a.spent += len(f) + 1
	}
	w.extraPaths()
	return out
}

// extraPaths judges the default words of unknown parameters (${X:-/etc/x}):
// the value may be that word.
func (w *walker) extraPaths() {
	for len(w.x.extra) > 0 {
		word := w.x.extra[0]
		w.x.extra = w.x.extra[1:]
		fields, _ := w.x.fields(word, nil)
		for _, f := range fields {
			w.fieldPath(f)
		}
	}
	w.x.extra = w.x.extra[:0]
}

// wordPaths expands a word and judges each field as a path.
func (w *walker) wordPaths(word *syntax.Word) {
	if word == nil {
		return
	}
	bare := isBareHome(word)
	for _, f := range w.expandWord(word, nil) {
		if !bare {
			w.fieldPath(f)
		}
	}
}

// fieldPath judges one expanded field as a path. A field with unknown
// parts is also judged with them empty ("$E".. may be ..), and counts (with
// its unknown parts) when that reading is a path.
func (w *walker) fieldPath(f string) {
	if v, ok := ShortOptionValue(f); ok {
		w.addPath(v)
	}
	if p, ok := pathLike(f); ok {
		w.addPath(p)
		return
	}
	if HasUnknown(f) {
		if _, ok := pathLike(strings.ReplaceAll(f, UnknownMark, "")); ok {
			w.addPath(f)
		}
	}
}

// addPath records a path once (the check is skipped for huge lists, where
// the external check dedups anyway).
func (w *walker) addPath(p string) {
	if p == "" || len(w.a.Paths) < 64 && slices.Contains(w.a.Paths, p) {
		return
	}
	if w.a.Paths == nil {
		w.a.Paths = w.slab.pathList()
	}
	w.a.Paths = append(w.a.Paths, p)
}

// assign records NAME=value (or +=) and judges the value as a path.
func (w *walker) assign(as *syntax.Assign, exported bool) {
	if as.Name == nil {
		return
	}
	name := as.Name.Value
	if as.Array != nil || as.Index != nil {
		syntax.Walk(as, func(n syntax.Node) bool {
			if word, ok := n.(*syntax.Word); ok {
				w.wordPaths(word)
				return false
			}
			return true
		})
		w.vars.forget(name)
		return
	}
	if as.Naked {
		if exported {
			if v, ok := w.vars.vars[name]; ok {
				v.exported = true
				w.vars.vars[name] = v
			}
		}
		return
	}
	w.substs(as.Value)
	val := w.x.literal(as.Value)
	w.extraPaths()
	if as.Value != nil && !isBareHome(as.Value) {
		w.fieldPath(name + "=" + val)
	}
	if as.Append {
		old, known := w.vars.lookup(name)
		if !known {
			old = UnknownMark
		}
		val = old + val
	}
	w.vars.set(name, val, w.cond == 0 && w.vars.inFunc == 0, exported)
	w.codeVariable(name, val)
}

// decl handles export, declare, local, readonly, typeset and nameref.
func (w *walker) decl(c *syntax.DeclClause) {
	words := []string{c.Variant.Value}
	exported := c.Variant.Value == "export"
	for _, as := range c.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			opt := w.x.literal(as.Value)
			words = append(words, opt)
			if strings.HasPrefix(opt, "-") && strings.ContainsRune(opt, 'x') {
				exported = true
			}
			if strings.HasPrefix(opt, "-") && strings.ContainsRune(opt, 'n') || c.Variant.Value == "nameref" || HasUnknown(opt) {
				// A name reference makes one name assign another.
				w.vars.tainted = true
			}
		}
	}
	for _, as := range c.Args {
		if as.Naked && as.Name == nil {
			continue
		}
		w.assign(as, exported)
		words = append(words, w.assignText(as))
	}
	w.a.Commands = append(w.a.Commands, words)
	w.addNormalized(words)
	w.codeInDecl(words)
}

func (w *walker) assignText(as *syntax.Assign) string {
	if as.Name == nil {
		return ""
	}
	if as.Naked {
		return as.Name.Value
	}
	v, _ := w.vars.lookup(as.Name.Value)
	op := "="
	if as.Append {
		op = "+="
	}
	return as.Name.Value + op + v
}

// call handles a simple command: prefix assignments, the expanded words,
// wrappers, script text and paths.
func (w *walker) call(c *syntax.CallExpr) {
	if len(c.Args) == 0 {
		for _, as := range c.Assigns {
			w.assign(as, false)
		}
		return
	}
	var env []string
	for _, as := range c.Assigns {
		// NAME=value cmd: the value is for cmd's environment, not the shell.
		if as.Name == nil || as.Naked || as.Array != nil || as.Index != nil {
			continue
		}
		w.substs(as.Value)
		val := w.x.literal(as.Value)
		w.extraPaths()
		if !isBareHome(as.Value) {
			w.fieldPath(as.Name.Value + "=" + val)
		}
		env = append(env, as.Name.Value+"="+val)
	}
	w.codeVariables(env)
	outerAlts := w.vars.altSeen
	w.vars.altSeen = nil
	fields := w.slab.fieldList(len(c.Args))
	var bare, fromEnv []bool
	for _, arg := range c.Args {
		n := len(fields)
		w.x.fromEnv = false
		fields = w.expandWord(arg, fields)
		if isBareHome(arg) {
			bare = markFields(bare, n, len(fields))
		}
		if w.x.fromEnv {
			fromEnv = markFields(fromEnv, n, len(fields))
		}
	}
	alts := w.vars.altSeen
	w.vars.altSeen = outerAlts
	if len(alts) > 0 {
		// Taken now: the command's own reading may forget them.
		defer w.altReadings(c.Args, fields, w.vars.altChoices(alts), env)
	}
	if len(fields) == 0 {
		return
	}
	w.span = w.argsText(c.Args)
	w.noteEcho(fields)
	script := scriptMarks{n: len(fields)}
	if w.timed {
		w.timed = false
		timed := append([]string{"time"}, fields...)
		w.addCommand(timed)
		w.unwrap(timed, -1, 0, env, &script)
	} else {
		w.addCommand(fields)
		w.unwrap(fields, 0, 0, env, &script)
	}
	// The reference reads no path in `echo $HOME`; an operand of any other
	// command that is only $HOME, or only a variable from the environment,
	// names a directory or file all the same (ls $HOME, cat $HISTFILE).
	prints := printsOnly(fields[0])
	for i, f := range fields {
		switch {
		case script.has(i):
		case i < len(bare) && bare[i]:
			if !prints && i > 0 {
				w.fieldPath(f)
			}
		case i > 0 && !prints && i < len(fromEnv) && fromEnv[i] && envOperand(f):
			w.addPath(f)
		default:
			w.fieldPath(f)
		}
	}
}

// maxAltReadings bounds the alternative readings of one simple command.
const maxAltReadings = 8

// altReadingCost is what one alternative reading counts against
// maxAnalysisWork besides its words, so that one analysis makes at most a
// few thousand readings however they nest.
const altReadingCost = 512

// altReadings reads a simple command again for the values its variables
// may hold when an assignment may or may not have run (if c; then B=rm;
// fi; $B -rf /): each reading is a normalized command, so that deny and ask
// rules see it, and its path words are judged. The command's own reading,
// with those variables unknown, stays what allow rules and overrides see
// (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm); these only add. At most maxAltReadings readings.
func (w *walker) altReadings(args []*syntax.Word, main []string, values [][]altChoice, env []string) {
	if len(values) == 0 {
		return
	}
	choices := make([]altChoice, len(values))
	for i := range values {
		choices[i] = values[i][0]
	}
	pick := make([]int, len(values))
	savedExtra, savedFromEnv := len(w.x.extra), w.x.fromEnv
	var fields []string
	for range maxAltReadings {
		// Each reading costs a fixed share of the budget too: a reading may
		// hand text to eval, whose commands have readings of their own.
		if w.a.spent += altReadingCost; w.a.spent > maxAnalysisWork {
			w.tooDeep()
			return
		}
		w.vars.choice = choices
		fields = fields[:0]
		for _, arg := range args {
			fields, _ = w.x.fields(arg, fields)
		}
		w.vars.choice = nil
		w.x.extra, w.x.fromEnv = w.x.extra[:savedExtra], savedFromEnv
		for _, f := range fields {
			w.a.spent += len(f) + 1
		}
		if len(fields) > 0 && !slices.Equal(fields, main) {
			reading := slices.Clone(fields)
			script := scriptMarks{n: len(reading)}
			w.unwrap(reading, 0, 0, env, &script)
			for i, f := range reading {
				if !script.has(i) {
					w.fieldPath(f)
				}
			}
		}
		// The next combination of values, as an odometer.
		i := 0
		for ; i < len(pick); i++ {
			if pick[i]++; pick[i] < len(values[i]) {
				break
			}
			pick[i] = 0
		}
		if i == len(pick) {
			return
		}
		for j := range choices {
			choices[j] = values[j][pick[j]]
		}
	}
}

// isSimple reports whether a statement is one simple command.
func isSimple(s *syntax.Stmt) bool {
	if s == nil {
		return false
	}
	_, ok := s.Cmd.(*syntax.CallExpr)
	return ok
}

// pureAssign reports whether a statement only assigns variables, with no
// substitution that could fail, or is an && list of such statements
// (A=x && B=y): it always succeeds, so what follows it with && runs.
func pureAssign(s *syntax.Stmt) bool {
	if s == nil || len(s.Redirs) > 0 || s.Negated || s.Background || s.Coprocess {
		return false
	}
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok {
		return b.Op == syntax.AndStmt && pureAssign(b.X) && pureAssign(b.Y)
	}
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) > 0 || len(c.Assigns) == 0 {
		return false
	}
	pure := true
	syntax.Walk(c, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
			pure = false
		}
		return pure
	})
	return pure
}

// envOperand reports whether an operand with a part from the environment
// may name any file: not an option, not text with blanks (a message), and
// the part is unknown ("$X"rootlink may be /etc/ plus rootlink).
func envOperand(f string) bool {
	return HasUnknown(f) && !strings.HasPrefix(f, "-") && !strings.ContainsAny(f, " \t\n")
}

// onlyUnknown reports whether a field is made of unknown parts only.
func onlyUnknown(f string) bool {
	return f != "" && strings.Trim(f, UnknownMark) == ""
}

// markFields marks fields [n, end) of a per-field flag list.
func markFields(flags []bool, n, end int) []bool {
	for len(flags) < end {
		flags = append(flags, len(flags) >= n)
	}
	return flags
}

// printsOnly reports whether a program only prints its arguments.
func printsOnly(name string) bool {
	switch programName(name) {
	case "echo", "printf":
		return true
	}
	return false
}

// noteEcho remembers what an echo or a printf without arguments writes, for
// a shell on the other side of a pipe (echo 'rm -rf ~' | bash).
func (w *walker) noteEcho(fields []string) {
	w.echoed, w.echoArgs, w.echoKnown = "", nil, false
	args := fields[1:]
	switch programName(fields[0]) {
	case "echo":
		for len(args) > 0 && (args[0] == "-n" || args[0] == "-E") {
			args = args[1:]
		}
		if len(args) > 0 && strings.HasPrefix(args[0], "-") {
			return
		}
		// Joined only when a pipe takes it (echoText).
		w.echoArgs, w.echoKnown = args, true
	case "printf":
		if len(args) != 1 || strings.Contains(args[0], "%") {
			return
		}
		text, _, err := expand.Format(nil, args[0], nil)
		if err != nil {
			return
		}
		w.echoed, w.echoKnown = text, true
	}
}

// echoText is what the last echo (echoArgs) or printf (echoed) wrote.
func (w *walker) echoText() string {
	if w.echoArgs != nil {
		return strings.Join(w.echoArgs, " ") + "\n"
	}
	return w.echoed
}

// addNormalized records one normalized command: the program by its base
// name and the words joined by single spaces.
func (w *walker) addNormalized(argv []string) {
	if len(argv) == 0 {
		return
	}
	name := programName(argv[0])
	s := w.normalizedText(name, argv[1:])
	if slices.Contains(w.a.Normalized, s) {
		return
	}
	norm := slices.Clip(argv)
	if name != argv[0] {
		norm = slices.Clone(argv)
		norm[0] = name
	}
	if w.a.Normalized == nil {
		// Most scripts have a few commands: one array for each list.
		w.a.Normalized, w.a.Argv = w.slab.normalizedLists()
	}
	w.a.Normalized = append(w.a.Normalized, s)
	w.a.Argv = append(w.a.Argv, norm)
	if home := w.vars.env.Home; home != "" && len(argv) > 1 && slices.ContainsFunc(argv[1:], func(a string) bool { return underHome(a, home) }) {
		// The same command with the home written as ~, as rules name it
		// (rm -rf ~): {~,x} and $HOME expand to the home directory.
		tilde := slices.Clone(argv)
		for i, a := range tilde[1:] {
			if underHome(a, home) {
				tilde[i+1] = "~" + a[len(home):]
			}
		}
		w.addNormalized(tilde)
	}
	if len(argv) > 1 && slices.ContainsFunc(argv[1:], untidyPath) {
		// The same command with its paths cleaned (rm -rf // is rm -rf /).
		clean := slices.Clone(argv)
		for i, a := range clean[1:] {
			if untidyPath(a) {
				clean[i+1] = path.Clean(a)
			}
		}
		w.addNormalized(clean)
	}
	if len(argv) > 1 && slices.ContainsFunc(argv[1:], HasUnknown) {
		// The reading where every unknown part is empty: rm -rf $X/* may be
		// rm -rf /*, and a deny rule must see that.
		w.addNormalized(emptyReading(argv))
	}
}

// normalizedText is name and args joined by single spaces: a part of the
// last simple command's text when that part reads the same (no new
// string), else a new string.
func (w *walker) normalizedText(name string, args []string) string {
	if len(args) == 0 {
		return name
	}
	n := len(name)
	for _, a := range args {
		n += 1 + len(a)
	}
	if s, ok := spanPart(w.span, n, name, args); ok {
		return s
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(name)
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(a)
	}
	return b.String()
}

// spanPart returns the first or last n bytes of span when they are name
// and args joined by single spaces (a command as written, or the command
// a wrapper runs at its end).
func spanPart(span string, n int, name string, args []string) (string, bool) {
	if n > len(span) {
		return "", false
	}
	if head := span[:n]; joinedIs(head, name, args) {
		return head, true
	}
	if tail := span[len(span)-n:]; joinedIs(tail, name, args) {
		return tail, true
	}
	return "", false
}

// joinedIs reports whether s is name and args joined by single spaces.
func joinedIs(s, name string, args []string) bool {
	if !strings.HasPrefix(s, name) {
		return false
	}
	s = s[len(name):]
	for _, a := range args {
		if len(s) < 1+len(a) || s[0] != ' ' || s[1:1+len(a)] != a {
			return false
		}
		s = s[1+len(a):]
	}
	return s == ""
}

// argsText is the text of a simple command's words in the script (from
// the first word's start to the last one's end), or "" when their
// positions do not fall in it.
func (w *walker) argsText(args []*syntax.Word) string {
	if len(args) == 0 {
		return ""
	}
	first, last := args[0].Pos(), args[len(args)-1].End()
	if !first.IsValid() || !last.IsValid() {
		return ""
	}
	start, end := first.Offset(), last.Offset()
	if start > end || end > uint(len(w.src)) {
		return ""
	}
	return w.src[start:end]
}

// initialCommands is the capacity the lists of an analysis start with.
const initialCommands = 8

// addCommand records a simple command as written.
func (w *walker) addCommand(fields []string) {
	if w.a.Commands == nil {
		w.a.Commands = w.slab.commandList()
	}
	w.a.Commands = append(w.a.Commands, fields)
}

// emptyReading is argv with every unknown part taken as empty (a word that
// was only unknown disappears, as an empty unquoted expansion does); the
// command name is kept as it is.
func emptyReading(argv []string) []string {
	empty := make([]string, 1, len(argv))
	empty[0] = argv[0]
	for _, a := range argv[1:] {
		if a = strings.ReplaceAll(a, UnknownMark, ""); a != "" {
			empty = append(empty, a)
		}
	}
	return empty
}

// unwrap records cur (a command's fields from index off of the original
// ones, or off < 0 when cur is a copy) as a normalized command, then looks
// through its wrapper, if it is one, to the command or script it runs.
// script marks the original fields that are script text read again.
func (w *walker) unwrap(cur []string, off, level int, env []string, script *scriptMarks) {
	if len(cur) == 0 {
		return
	}
	if level > maxWrapLayers {
		w.tooDeep()
		return
	}
	w.addNormalized(cur)
	w.effects(cur)
	name := cur[0]
	if HasUnknown(name) {
		w.a.UnknownCommand = true
		if name == UnknownMark {
			// An unquoted expansion that is empty disappears: the next word
			// may be the command.
			w.unwrap(cur[1:], shift(off, 1), level+1, env, script)
		} else if known := strings.ReplaceAll(name, UnknownMark, ""); known != "" {
			// The reading where the unknown parts are empty ("$E"sudo).
			w.unwrap(append([]string{known}, cur[1:]...), -1, level+1, env, script)
		}
		if s := scanShell(cur); s.script >= 0 {
			// $SHELL -c TEXT: the unknown program may be a shell.
			w.reparse(cur[s.script], false, env)
		}
		// Any other reading runs a command not known here, which may be
		// eval or source: no variable is known after it.
		w.vars.tainted = true
		return
	}
	prog := programName(name)
	spec, ok := wrappers[prog]
	if !ok {
		w.launched(cur, off, level, env, script)
		return
	}
	if slices.ContainsFunc(cur[1:], HasUnknown) {
		// The wrapper's options may hold unknown parts (sh "$E"-c ...):
		// also read it with them empty.
		w.unwrap(emptyReading(cur), -1, level+1, env, script)
	}
	mark := func(i int) {
		if off >= 0 {
			script.mark(off + i)
		}
	}
	switch spec.kind {
	case runsShell:
		s := scanShell(cur)
		switch {
		case s.script >= 0:
			mark(s.script)
			w.reparse(cur[s.script], false, env)
			if bound, ok := bindPositional(cur[s.script], cur[s.script+1:]); ok {
				w.reparse(bound, false, env)
			}
		case s.stdin:
			w.stdinScript(env)
		}
		return
	case runsEval:
		for i := 1; i < len(cur); i++ {
			mark(i)
		}
		w.reparse(strings.Join(cur[1:], " "), true, env)
		return
	case runsTrap:
		if len(cur) >= 3 && !strings.HasPrefix(cur[1], "-") {
			mark(1)
			w.reparse(cur[1], true, env)
		}
		return
	case runsFind:
		for _, inner := range findExecs(cur) {
			w.unwrap(inner.argv, shift(off, inner.start), level+1, env, script)
		}
		return
	}
	s := scanOpts(&spec, cur)
	w.codeVariables(s.assigns)
	if len(s.assigns) > 0 {
		env = slices.Concat(env, s.assigns)
	}
	if s.chdir {
		w.vars.pwdUnknown = true
	}
	if s.script >= 0 {
		mark(s.script)
		text := s.text
		if prog == "env" && s.script+1 < len(cur) {
			// env -S splits its value into words and runs them with the
			// arguments that follow.
			for i := s.script + 1; i < len(cur); i++ {
				mark(i)
			}
			text += " " + strings.Join(cur[s.script+1:], " ")
		}
		w.reparse(text, false, env)
		return
	}
	if s.stopped || spec.kind == runsScript && !s.exec {
		return
	}
	rest := cur[s.next:]
	switch spec.kind {
	case runsJoined:
		if !s.exec && len(rest) > 0 {
			for i := s.next; i < len(cur); i++ {
				mark(i)
			}
			w.reparse(strings.Join(rest, " "), false, env)
			return
		}
	case runsXargs:
		if len(rest) > 0 {
			// The marker's index is past the fields: mark ignores it.
			inner := append(slices.Clip(rest), InputMark)
			w.unwrap(inner, shift(off, s.next), level+1, env, script)
		}
		return
	case runsParallel:
		for _, inner := range parallelCommands(rest) {
			w.unwrap(inner, -1, level+1, env, script)
		}
		return
	}
	w.unwrap(rest, shift(off, s.next), level+1, env, script)
}

// parallelCommands are the commands GNU parallel runs for its operands
// (docs/decisions.md#unlisted-launchers): with one ::: list of inputs, the
// command with each input appended; with no command, each input as a
// command line of its own (its words split at blanks). Inputs read from
// stdin or a file (no :::, or ::::), several lists, or a command with a
// replacement string ({}) are unknown: the command gets an unknown last
// argument, as under xargs.
func parallelCommands(rest []string) [][]string {
	cmd, inputs, known := splitParallel(rest)
	if !known {
		// A word with a replacement string ({}, {.}, {1}) takes an
		// input: it is unknown too.
		unknown := make([]string, 0, len(cmd)+1)
		for _, w := range cmd {
			if strings.Contains(w, "{") {
				w = InputMark
			}
			unknown = append(unknown, w)
		}
		return [][]string{append(unknown, InputMark)}
	}
	out := make([][]string, 0, len(inputs))
	for _, in := range inputs {
		if len(cmd) == 0 {
			out = append(out, strings.Fields(in))
			continue
		}
		out = append(out, append(slices.Clip(cmd), in))
	}
	return out
}

// splitParallel splits parallel's operands at its one ::: list; known is
// false when the inputs are not all written there.
func splitParallel(rest []string) (cmd, inputs []string, known bool) {
	sep := slices.IndexFunc(rest, func(w string) bool { return strings.HasPrefix(w, ":::") })
	if sep < 0 {
		return rest, nil, false
	}
	cmd, inputs = rest[:sep], rest[sep+1:]
	if rest[sep] != ":::" || slices.ContainsFunc(inputs, func(w string) bool { return strings.HasPrefix(w, ":::") }) ||
		slices.ContainsFunc(cmd, func(w string) bool { return strings.Contains(w, "{") }) {
		return cmd, nil, false
	}
	return cmd, inputs, len(inputs) > 0
}

// launched looks through the first later word of a program not known to
// leave its arguments alone that names a wrapper or a shell (chronic sudo
// rm -rf /, setarch x86_64 sh -c TEXT): the program may launch it
// (docs/decisions.md#unlisted-launchers). The words after that wrapper are
// reached through it, so one is enough.
func (w *walker) launched(cur []string, off, level int, env []string, script *scriptMarks) {
	if len(cur) < 2 || leavesArgsAlone(cur[0], cur[1]) {
		return
	}
	for i := 1; i < len(cur); i++ {
		if mayNameProgram(cur[i]) && changesMeaning(programName(cur[i])) {
			w.unwrap(cur[i:], shift(off, i), level+1, env, script)
			break
		}
	}
	for _, a := range cur[1:] {
		w.commandText(a)
	}
}

// commandText reads an argument with a blank in it, given to a program not
// known to leave its arguments alone, as the command string such programs
// often run (cmd /c "...", pwsh -c "...", ssh host "...", a project's own
// runner): its simple commands become readings too. Only its commands are
// taken, not its paths or its opacity, so a message that merely reads like
// text does not ask for being outside the workspace. Text nested past
// MaxReparseDepth or the work budget, here or inside it, is TooDeep as
// script text is (docs/decisions.md#unread-script-text-is-denied): the
// command it holds may be a denied one.
func (w *walker) commandText(a string) {
	// Unknown parts read as empty, as an unset variable expands.
	a = strings.ReplaceAll(a, UnknownMark, "")
	if !strings.ContainsAny(a, " \t\n") {
		return
	}
	if w.depth+1 > MaxReparseDepth || w.a.spent+len(a) > maxAnalysisWork {
		w.tooDeep()
		return
	}
	w.a.spent += len(a)
	if len(a) > maxParseBytes || nestingDepth(a) > maxNesting {
		return
	}
	f, err := parseBash(a)
	if err != nil {
		return // not shell (python -c code, prose): other rules read it
	}
	var sub Analysis
	child := newWalker(&sub, w.childVars(nil), w.depth+1)
	child.file(f)
	if sub.TooDeep {
		w.tooDeep()
	}
	for i, n := range sub.Normalized {
		if !slices.Contains(w.a.Normalized, n) && i < len(sub.Argv) {
			w.a.Normalized = append(w.a.Normalized, n)
			w.a.Argv = append(w.a.Argv, sub.Argv[i])
		}
	}
}

// scriptMarks marks the fields of a command that are script text read
// again (not paths of their own); the list is made on the first mark.
type scriptMarks struct {
	n     int
	marks []bool
}

func (s *scriptMarks) mark(i int) {
	if s == nil || i < 0 || i >= s.n {
		return
	}
	if s.marks == nil {
		s.marks = make([]bool, s.n)
	}
	s.marks[i] = true
}

func (s *scriptMarks) has(i int) bool { return i < len(s.marks) && s.marks[i] }

// untidyPath reports whether an absolute or ~ path word is not clean:
// // or /./ or /../ in it, or a trailing / or /. after a name.
func untidyPath(a string) bool {
	if !strings.HasPrefix(a, "/") && !strings.HasPrefix(a, "~/") {
		return false
	}
	return a != "/" && path.Clean(a) != a
}

// underHome reports whether a word is the home directory or a path below it.
func underHome(a, home string) bool {
	return strings.HasPrefix(a, home) && (len(a) == len(home) || a[len(home)] == '/')
}

func shift(off, n int) int {
	if off < 0 {
		return off
	}
	return off + n
}

// effects applies what a command does to the analysis' knowledge: cd makes
// $PWD unknown; eval, source and unknown commands may assign anything;
// read, mapfile, getopts, unset and printf -v assign the names they get.
func (w *walker) effects(argv []string) {
	w.codeInArgs(argv)
	if HasUnknown(argv[0]) {
		return // unwrap taints after reading the command's empty reading
	}
	switch programName(argv[0]) {
	case "cd", "pushd", "popd":
		w.vars.pwdUnknown = true
		if programName(argv[0]) == "cd" && !slices.ContainsFunc(argv[1:], func(a string) bool { return !strings.HasPrefix(a, "-") }) {
			// cd alone goes home.
			home, _ := w.vars.lookup("HOME")
			if home == "" {
				home = UnknownMark + "/"
			}
			w.addPath(home)
		}
		for _, a := range argv[1:] {
			if a == "-" {
				w.addPath(UnknownMark)
				break
			}
			if strings.HasPrefix(a, "-") && len(a) > 1 {
				continue
			}
			if _, ok := pathLike(a); !ok {
				// cd's operand is a directory even without a slash.
				w.addPath(a)
			}
			break
		}
	case "source", ".":
		w.vars.tainted = true
		if len(argv) > 1 && HasUnknown(argv[1]) {
			// source <(curl ...), . "$F": the script text is not known.
			w.a.UnknownCommand = true
			w.addPath(UnreadPath)
		}
	case "export", "declare", "typeset", "local", "readonly", "alias", "enable":
		w.vars.tainted = true
	case "read", "mapfile", "readarray", "getopts", "unset", "printf", "wait":
		for _, a := range argv[1:] {
			if HasUnknown(a) {
				w.vars.tainted = true
				return
			}
			if isEnvName(a) {
				w.vars.forget(a)
			}
		}
	}
}

// reparse reads script text that a command gives to a shell. same is true
// for eval and trap, which run it in the current shell; otherwise it runs
// in a child shell that sees only exported variables and env's NAME=VALUE.
func (w *walker) reparse(text string, same bool, env []string) {
	if w.depth+1 > MaxReparseDepth || w.a.spent+len(text) > maxAnalysisWork {
		w.tooDeep()
		return
	}
	w.a.spent += len(text)
	if HasUnknown(text) {
		// Unknown text spliced into a script may be any command, and
		// name any path.
		w.a.UnknownCommand = true
		w.addPath(UnreadPath)
		text = strings.ReplaceAll(text, UnknownMark, "$"+unknownName)
	}
	vars := w.vars
	if !same {
		vars = w.childVars(env)
	}
	child := newWalker(w.a, vars, w.depth+1)
	child.slab = w.slab // the same Analysis
	if same {
		child.cond = w.cond
	}
	child.script(text)
	if same {
		w.vars.tainted = true
	}
}

// childVars is the environment of a child shell.
func (w *walker) childVars(env []string) *shellVars {
	cv := &shellVars{env: w.vars.env, tainted: w.vars.tainted, pwdUnknown: w.vars.pwdUnknown}
	for name, v := range w.vars.vars {
		if v.exported && v.known {
			cv.set(name, v.val, true, true)
		}
	}
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		cv.set(name, val, true, true)
	}
	return cv
}

// stdinScript handles a shell that reads its script from standard input:
// a here-document or here-string is read again; a pipe or a file is not
// known.
func (w *walker) stdinScript(env []string) {
	if w.in.has {
		w.reparse(w.in.text, false, env)
		return
	}
	w.a.UnknownCommand = true
	w.addPath(UnreadPath)
}

// tooDeep marks text or words the analysis stops short of reading: no allow
// rule vouches for the command (Opaque), and the text may name any path.
func (w *walker) tooDeep() {
	w.a.TooDeep = true
	w.addPath(UnreadPath)
}

// script parses text and walks it; text that does not parse is scanned
// word by word and marks the analysis as not parsed.
func (w *walker) script(text string) {
	if len(text) > maxParseBytes || nestingDepth(text) > maxNesting {
		w.fallback(text)
		return
	}
	if f, ok := quickParse(text); ok {
		w.src = text
		w.file(f)
		return
	}
	f, err := parseBash(text)
	if err != nil {
		w.fallback(text)
		return
	}
	w.src = text
	w.file(f)
}

// fallback scans text the parser does not take: split on operators, each
// piece is a command whose words are judged as paths.
func (w *walker) fallback(text string) {
	w.a.Parsed = false
	home := w.vars.env.Home
	var current []string
	flush := func() {
		if len(current) > 0 {
			w.a.Commands = append(w.a.Commands, current)
			w.unwrap(current, -1, 0, nil, nil)
			current = nil
		}
	}
	for _, word := range splitShellWords(text, flush) {
		current = append(current, word)
		if p, ok := PathWord(word, home); ok {
			w.addPath(p)
		}
	}
	flush()
}
