package shell

import (
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Env is what the static shell analysis knows of the environment a
// command runs in. Everything else (other variables, $1, $@, command
// output) is unknown and expands to UnknownMark.
type Env struct {
	// Home is the server user's home: ~, ~<User>, $HOME. Empty: unknown.
	Home string
	// User is the server user's name, for ~user; empty means the last
	// element of Home.
	User string
	// Dir is the command's working directory ($PWD, ~+): the workdir
	// argument or the workspace, absolute. Empty: unknown.
	Dir string
}

// maxFieldsPerWord caps the fields one word may expand to (brace
// expansion); a word with more is cut there and reported as an unknown
// path, so that no input costs unbounded work and no path hides past the cut.
const maxFieldsPerWord = 256

// unknownVar is the name of a parameter that always expands to
// UnknownMark: the analysis puts it where a part cannot be known (a command
// substitution, an unset variable) before handing a word to the expand
// package, which keeps parameter values as they are (it drops NUL bytes
// from literals and command output, so the mark cannot come from those).
const unknownVar = "\x00"

// unknownPart is the word part that stands for an unknown value.
func unknownPart() syntax.WordPart {
	return &syntax.ParamExp{Short: true, Param: &syntax.Lit{Value: unknownVar}}
}

// scriptVar is a variable the script itself assigns.
type scriptVar struct {
	val      string
	known    bool
	exported bool
	// alts are values the variable may hold when it is not known: each
	// value an assignment that may or may not have run gave it, and the
	// value it had before (if known). Besides those it may hold its unknown
	// value (unset, or from the environment). At most maxAlts.
	alts []string
}

// maxAlts bounds the values kept for one variable that may or may not have
// been assigned.
const maxAlts = 4

// maxAltNames bounds the variables with alternative values one simple
// command is read again for.
const maxAltNames = 3

// shellVars is the expand.Environ of the analysis: the script's known
// variables, $HOME, $PWD and ~ forms; all else is unknown.
type shellVars struct {
	env  Env
	vars map[string]scriptVar
	// tainted is set once the script ran something that may assign any
	// variable (eval, source, an unknown command): from there on no script
	// variable, nor HOME or PWD, is known.
	tainted bool
	// pwdUnknown is set after cd, pushd or popd.
	pwdUnknown bool
	// inFunc counts function bodies being walked: a body runs when it is
	// called, after assignments the walk has not seen, so no variable the
	// script assigns anywhere is known inside it.
	inFunc   int
	assigned map[string]bool
	// altSeen are the variables with alternative values (scriptVar.alts)
	// that expansions looked up while they were not known.
	altSeen []string
	// choice, while set, gives the variables of one alternative reading
	// their values.
	choice []altChoice
	// defaults are, for variables not known, the values their expansions
	// give when unset or set (${B:-rm}, ${B:+x}): more alternative values.
	defaults map[string][]string
}

// altChoice is one variable's value in an alternative reading.
type altChoice struct{ name, val string }

var (
	unknownVariable = expand.Variable{Set: true, Kind: expand.String, Str: UnknownMark}
	unknownDir      = expand.Variable{Set: true, Kind: expand.String, Str: UnknownMark + "/"}
)

// lookup returns a variable's value and whether it is known.
func (s *shellVars) lookup(name string) (string, bool) {
	if name == "IFS" {
		// Field splitting follows the script's own IFS, else the default
		// (bash does not take IFS from its environment).
		if v, ok := s.vars[name]; ok && v.known && !s.tainted {
			return v.val, true
		}
		return " \t\n", true
	}
	for _, c := range s.choice {
		if c.name == name {
			return c.val, true
		}
	}
	if name == unknownVar || name == unknownName {
		return "", false
	}
	if v, ok := s.vars[name]; ok && len(v.alts) > 0 && (s.tainted || !v.known) {
		s.noteAlt(name)
	}
	if s.tainted {
		return "", false
	}
	if s.inFunc > 0 && s.assigned[name] {
		return "", false
	}
	if v, ok := s.vars[name]; ok {
		return v.val, v.known
	}
	switch name {
	case "HOME":
		return s.env.Home, s.env.Home != ""
	case "PWD":
		return s.env.Dir, s.env.Dir != "" && !s.pwdUnknown
	}
	return "", false
}

// Get implements expand.Environ. The "HOME <user>" form is how expand asks
// for ~user; ~+ and ~- arrive as users "+" and "-".
func (s *shellVars) Get(name string) expand.Variable {
	if user, ok := strings.CutPrefix(name, "HOME "); ok {
		switch {
		case user == "+":
			name = "PWD"
		case user == s.serverUser():
			name = "HOME"
		default:
			// Another user's home: unknown, but still a directory, so
			// that ~bob and ~- are path words.
			return unknownDir
		}
	}
	v, ok := s.lookup(name)
	if !ok {
		if name == "HOME" || name == "PWD" {
			// Only ~ and ~+ ask for these here (an unknown $HOME is
			// replaced before expansion): still a directory.
			return unknownDir
		}
		return unknownVariable
	}
	return expand.Variable{Set: true, Kind: expand.String, Str: v}
}

// Each implements expand.Environ; only the analysis asks for names.
func (s *shellVars) Each(func(string, expand.Variable) bool) {}

func (s *shellVars) serverUser() string {
	if s.env.User != "" {
		return s.env.User
	}
	if s.env.Home == "" {
		return ""
	}
	return path.Base(slashes(s.env.Home))
}

// set records an assignment; definite is false when it may or may not run
// (inside a condition, a loop, a pipeline, a subshell), which leaves the
// variable unknown.
func (s *shellVars) set(name, val string, definite, exported bool) {
	if s.vars == nil {
		s.vars = make(map[string]scriptVar, 4)
	}
	old := s.vars[name]
	nv := scriptVar{val: val, known: definite && !HasUnknown(name), exported: exported || old.exported}
	if !nv.known && !HasUnknown(name) {
		nv.alts = s.altsAfter(name, val)
	}
	s.vars[name] = nv
}

// altsAfter is the values a variable may hold after an assignment of val
// that may or may not run: val, and what it may have held before.
func (s *shellVars) altsAfter(name, val string) []string {
	var alts []string
	if old, ok := s.lookupQuiet(name); ok && !HasUnknown(old) {
		alts = append(alts, old)
	} else if v, ok := s.vars[name]; ok {
		alts = append(alts, v.alts...)
	}
	if !HasUnknown(val) && !slices.Contains(alts, val) && len(alts) < maxAlts {
		alts = append(alts, val)
	}
	if len(alts) == 0 {
		return nil
	}
	return alts
}

// lookupQuiet is lookup without noting alternative values.
func (s *shellVars) lookupQuiet(name string) (string, bool) {
	seen := s.altSeen
	v, ok := s.lookup(name)
	s.altSeen = seen
	return v, ok
}

// altChoices lists, for each named variable that still has alternative
// values, those values as choices.
func (s *shellVars) altChoices(names []string) [][]altChoice {
	var out [][]altChoice
	for _, name := range names {
		alts := s.vars[name].alts
		if d := s.defaults[name]; len(d) > 0 {
			alts = slices.Clip(alts)
			for _, v := range d {
				if !slices.Contains(alts, v) && len(alts) < 2*maxAlts {
					alts = append(alts, v)
				}
			}
		}
		if len(alts) == 0 {
			continue
		}
		list := make([]altChoice, len(alts))
		for i, v := range alts {
			list[i] = altChoice{name: name, val: v}
		}
		out = append(out, list)
	}
	return out
}

// noteDefault records that an expansion of a variable not known gives val
// when the variable is set to val (${B:-val}, ${B:=val}, ${B:+val}).
func (s *shellVars) noteDefault(name, val string) {
	if s.defaults == nil {
		s.defaults = make(map[string][]string, 2)
	}
	if d := s.defaults[name]; !slices.Contains(d, val) && len(d) < maxAlts {
		s.defaults[name] = append(d, val)
	}
	s.noteAlt(name)
}

// noteAlt records that an expansion used a variable with alternative
// values while it was not known.
func (s *shellVars) noteAlt(name string) {
	if !slices.Contains(s.altSeen, name) && len(s.altSeen) < maxAltNames {
		s.altSeen = append(s.altSeen, name)
	}
}

// forget makes a variable unknown from here on.
// varsSnapshot is what a subshell may change of the variables and must not
// hand back to its parent.
type varsSnapshot struct {
	vars                map[string]scriptVar
	tainted, pwdUnknown bool
}

// save snapshots the variables before a subshell runs.
func (s *shellVars) save() varsSnapshot {
	return varsSnapshot{vars: maps.Clone(s.vars), tainted: s.tainted, pwdUnknown: s.pwdUnknown}
}

// restore puts back the variables a subshell ran with; what expansions
// noted meanwhile (alternatives seen, defaults) is kept, as it widens the
// readings.
func (s *shellVars) restore(snap varsSnapshot) {
	s.vars, s.tainted, s.pwdUnknown = snap.vars, snap.tainted, snap.pwdUnknown
}

func (s *shellVars) forget(name string) {
	if s.vars == nil {
		s.vars = make(map[string]scriptVar, 4)
	}
	v := s.vars[name]
	v.known, v.alts = false, nil
	s.vars[name] = v
}

// expander expands words as bash would, statically.
type expander struct {
	vars *shellVars
	cfg  expand.Config
	// extra collects words that may be the value of an unknown parameter
	// with a default (${X:-/etc/x}): they are judged as paths too.
	extra []*syntax.Word
	// fromEnv is set when a word used a variable the script never assigns
	// (its value comes from the environment: any path at all).
	fromEnv bool
}

func newExpander(vars *shellVars) *expander {
	x := &expander{}
	x.init(vars)
	return x
}

// init sets up an expander over vars.
func (x *expander) init(vars *shellVars) {
	x.vars = vars
	x.cfg = expand.Config{
		Env:       vars,
		ExtGlob:   true, // keep @(...) as text; there is no globbing (no ReadDir)
		CmdSubst:  unknownCmdSubst,
		ProcSubst: unknownProcSubst,
	}
}

// unknownCmdSubst and unknownProcSubst give a substitution's output as
// unknown (package-level, so that an expander allocates no closures).
func unknownCmdSubst(w io.Writer, _ *syntax.CmdSubst) error {
	_, err := io.WriteString(w, UnknownMark)
	return err
}

func unknownProcSubst(*syntax.ProcSubst) (string, error) { return UnknownMark, nil }

// simpleLit returns the value of a word that is one literal needing no
// expansion at all, the common case, without calling expand.
func simpleLit(word *syntax.Word) (string, bool) {
	if len(word.Parts) != 1 {
		return "", false
	}
	lit, ok := word.Parts[0].(*syntax.Lit)
	if !ok {
		return "", false
	}
	v := lit.Value
	if v == "" || v[0] == '~' || strings.ContainsAny(v, "\\{\x00") {
		return "", false
	}
	return v, true
}

// fields expands a word as a command argument: braces, tilde, parameters,
// quote removal and field splitting, but no globbing. It appends to out and
// reports whether the word had more fields than maxFieldsPerWord.
func (x *expander) fields(word *syntax.Word, out []string) ([]string, bool) {
	if v, ok := simpleLit(word); ok {
		return append(out, v), false
	}
	return x.expandFields(word, out)
}

// expandFields is fields through the expand package; a panic in it (an
// operator it does not support) gives the word's rough text.
func (x *expander) expandFields(word *syntax.Word, out []string) (res []string, cut bool) {
	prepared := x.prepare(word)
	n := len(out)
	defer func() {
		if r := recover(); r != nil {
			res, cut = append(out[:n], roughText(word)), false
		}
	}()
	braced := *prepared // SplitBraces replaces the parts of the word it gets
	if !syntax.SplitBraces(&braced) {
		return x.appendFields(out, n, prepared, word)
	}
	for bw, err := range expand.BracesSeq(&x.cfg, &braced) {
		if err != nil {
			return out, true
		}
		if out, cut = x.appendFields(out, n, joinLits(bw), word); cut {
			return out, true
		}
	}
	return out, false
}

// appendFields appends the fields of one brace-expanded word; out[:n] were
// there before the word.
func (x *expander) appendFields(out []string, n int, bw, word *syntax.Word) ([]string, bool) {
	for f, err := range expand.FieldsSeq(&x.cfg, bw) {
		if err != nil {
			return append(out[:n], roughText(word)), false
		}
		if len(out)-n == maxFieldsPerWord {
			return out, true
		}
		out = append(out, f)
	}
	return out, false
}

// joinLits joins the adjacent literals of a brace-expanded word and drops
// empty ones, so that tilde expansion sees ~ at the start as bash does
// ({~,x} is ~ and x) and an empty alternative ({bash,}) gives no field. The
// parts may be shared with other words: new literals are made.
func joinLits(w *syntax.Word) *syntax.Word {
	parts := make([]syntax.WordPart, 0, len(w.Parts))
	var lit *syntax.Lit
	for _, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			lit = nil
			parts = append(parts, p)
			continue
		}
		if l.Value == "" {
			continue
		}
		if lit == nil {
			lit = &syntax.Lit{ValuePos: l.ValuePos, ValueEnd: l.ValueEnd, Value: l.Value}
			parts = append(parts, lit)
			continue
		}
		lit.Value += l.Value
	}
	return &syntax.Word{Parts: parts}
}

// literal expands a word as an assignment value: no brace expansion and no
// field splitting.
func (x *expander) literal(word *syntax.Word) string {
	if word == nil {
		return ""
	}
	if v, ok := simpleLit(word); ok {
		return v
	}
	return x.orRough(word, expand.Literal)
}

// document expands a here-document body (unquoted delimiter).
func (x *expander) document(word *syntax.Word) string {
	return x.orRough(word, expand.Document)
}

// orRough expands the prepared word with expandWord, or returns the word's
// rough text when the expansion fails or panics.
func (x *expander) orRough(word *syntax.Word, expandWord func(*expand.Config, *syntax.Word) (string, error)) (res string) {
	prepared := x.prepare(word)
	defer func() {
		if r := recover(); r != nil {
			res = roughText(word)
		}
	}()
	s, err := expandWord(&x.cfg, prepared)
	if err != nil {
		return roughText(word)
	}
	return s
}

// prepare returns word with every part whose value cannot be known replaced
// by unknownPart: command and process substitutions, arithmetic, and
// parameters that are not known variables (or known ones under an operator
// the analysis does not evaluate). The word is copied where it changes; the
// tree is not modified.
func (x *expander) prepare(word *syntax.Word) *syntax.Word {
	parts, changed := x.prepareParts(word.Parts)
	if !changed {
		return word
	}
	return &syntax.Word{Parts: parts}
}

func (x *expander) prepareParts(parts []syntax.WordPart) ([]syntax.WordPart, bool) {
	var out []syntax.WordPart
	for i, part := range parts {
		np := x.preparePart(part)
		if np != part && out == nil {
			out = make([]syntax.WordPart, i, len(parts))
			copy(out, parts[:i])
		}
		if out != nil {
			out = append(out, np)
		}
	}
	if out == nil {
		return parts, false
	}
	return out, true
}

func (x *expander) preparePart(part syntax.WordPart) syntax.WordPart {
	switch p := part.(type) {
	case *syntax.Lit, *syntax.SglQuoted, *syntax.ExtGlob:
		return part
	case *syntax.DblQuoted:
		parts, changed := x.prepareParts(p.Parts)
		if !changed {
			return part
		}
		dq := *p
		dq.Parts = parts
		return &dq
	case *syntax.ParamExp:
		return x.prepareParam(p)
	}
	// CmdSubst, ProcSubst, ArithmExp and anything newer.
	return unknownPart()
}

// prepareParam keeps a parameter expansion that names a known variable and
// uses only operators evaluated on a fully known value; anything else is
// unknown. For an unknown parameter with a default or alternate word, that
// word is kept aside to be judged as a path too.
func (x *expander) prepareParam(p *syntax.ParamExp) syntax.WordPart {
	if p.Param == nil || p.Flags != nil || p.NestedParam != nil || p.Excl || p.Width || p.IsSet ||
		p.Index != nil || p.Slice != nil || p.Names != 0 || len(p.Modifiers) > 0 {
		return unknownPart()
	}
	val, known := x.vars.lookup(p.Param.Value)
	if !known && isEnvName(p.Param.Value) && p.Param.Value != unknownName {
		if _, assigned := x.vars.vars[p.Param.Value]; !assigned || x.vars.tainted {
			x.fromEnv = true
		}
	}
	if !known || p.Param.Value == unknownVar {
		if p.Exp != nil && p.Exp.Word != nil {
			switch p.Exp.Op {
			case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset,
				syntax.AssignUnsetOrNull, syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
				if len(x.extra) < maxFieldsPerWord {
					x.extra = append(x.extra, p.Exp.Word)
				}
				if p.Param.Value != unknownVar && isEnvName(p.Param.Value) {
					// One more reading: the variable set to the word's value
					// gives that value (${B:-rm} -rf / may be rm -rf /).
					if v := x.literal(p.Exp.Word); v != "" && !HasUnknown(v) {
						x.vars.noteDefault(p.Param.Value, v)
					}
				}
			}
		}
		return unknownPart()
	}
	if p.Length || p.Repl != nil || p.Exp != nil {
		if HasUnknown(val) {
			return unknownPart()
		}
	}
	if p.Repl == nil && p.Exp == nil {
		return p
	}
	np := *p
	if p.Repl != nil {
		r := *p.Repl
		if r.Orig != nil {
			r.Orig = x.prepare(r.Orig)
		}
		if r.With != nil {
			r.With = x.prepare(r.With)
		}
		np.Repl = &r
	}
	if p.Exp != nil {
		e := *p.Exp
		if e.Word != nil {
			e.Word = x.prepare(e.Word)
		}
		np.Exp = &e
	}
	return &np
}

// roughText is a word's text with quotes removed and every part that is not
// plain text (or that expand refused) replaced by UnknownMark; it stands in
// when expansion fails.
func roughText(word *syntax.Word) string {
	var b strings.Builder
	writeRough(&b, word.Parts, false)
	return b.String()
}

func writeRough(b *strings.Builder, parts []syntax.WordPart, quoted bool) {
	for _, part := range parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, quoted))
		case *syntax.SglQuoted:
			if p.Dollar {
				s, _, err := expand.Format(nil, p.Value, nil)
				if err != nil {
					b.WriteString(UnknownMark)
					continue
				}
				s, _, _ = strings.Cut(s, "\x00")
				b.WriteString(s)
				continue
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			writeRough(b, p.Parts, true)
		default:
			b.WriteString(UnknownMark)
		}
	}
}
