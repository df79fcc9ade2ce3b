package engine

import (
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
	"github.com/toolgate/toolgate/policy"
)

// tailRules marks the ask and deny shell rules of one tool that a launch
// reading (shell/launch.go) can meet when the command it was read from does
// not. Most readings are a tail of that command, starting after a blank or
// a slash, and the command itself is matched strictly too; so a rule that
// matches wherever its text starts can meet the tail only if it met the
// command already, and is not marked:
//   - a glob that starts with * (in a strict match * takes the head too);
//   - a re: pattern with no ^ or \A (a search finds the same match in the
//     command; \b and \B see a non-word character before the tail either way).
//
// The marked rules are found among the command's own candidates (every key
// a tail holds, its command holds), so the command is scanned once for all
// its tails. Readings that are not a tail of their command (a name without
// .exe, git's own programs, a subcommand after options) meet every rule
// (collect).
type tailRules struct {
	marked []bool // by position in the tool's scan list
	any    bool   // some scanned rule is marked
	exact  bool   // some literal rule is an ask or deny rule
}

// markTails marks a tool's rules for its tails.
func (tr *toolRules) markTails() {
	tr.tails.marked = make([]bool, len(tr.scan))
	for i, r := range tr.scan {
		if r.category == CategoryShell && r.level >= policy.Ask && !startsAnywhere(r.m) {
			tr.tails.marked[i] = true
			tr.tails.any = true
		}
	}
	for _, rules := range tr.exact {
		for _, r := range rules {
			tr.tails.exact = tr.tails.exact || r.level >= policy.Ask
		}
	}
	if !tr.tails.any {
		tr.tails.marked = nil
	}
}

// startsAnywhere reports whether every match of m in a tail of a value
// (starting after a blank or a slash) is also a match in the value: a glob
// that starts with *, or a re: pattern without a start-of-text anchor.
func startsAnywhere(m *matcher) bool {
	if !m.isRegex {
		return m.hasWild && strings.HasPrefix(m.raw, "*")
	}
	for i := range m.re.exprs {
		tree, ok := m.re.tree(i)
		if !ok {
			return false
		}
		if anchorsStart(tree) {
			return false
		}
	}
	return true
}

// anchorsStart reports whether a regexp holds ^ or \A anywhere.
func anchorsStart(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpBeginLine {
		return true
	}
	for _, sub := range re.Sub {
		if anchorsStart(sub) {
			return true
		}
	}
	return false
}

// tailReadings matches the tails of one command against a tool's marked
// rules: the command's candidates are found once, on its first tail.
type tailReadings struct {
	tr *toolRules
	// marks are what collect kept of the call's command, copied: a
	// pointer here would move them to the heap.
	marks   tailMarks
	command string
	scanned bool
	// cands are the marked candidates' positions: buf[:n], or spill when
	// there are more than buf holds (a slice into buf would move t to the
	// heap).
	n     int
	buf   [candidateBuf]int32
	spill []int32
}

// from starts the tails of command.
func (t *tailReadings) from(command string) {
	t.command, t.scanned, t.n, t.spill = command, false, 0, nil
}

// isTail reports whether reading is a tail of the command that starts
// after a blank or a slash, with no backslash (a value with one is matched
// in full, as its / form): the readings for which only marked rules can add
// a hit. The command itself is no tail: it is matched in full already.
func (t *tailReadings) isTail(reading string) bool {
	s := t.command
	k := len(s) - len(reading)
	return k > 0 && (s[k-1] == ' ' || s[k-1] == '/') && s[k:] == reading &&
		strings.IndexByte(reading, '\\') < 0
}

// appendHits appends to hits each rule that matches a tail strictly and is
// not a hit yet.
func (t *tailReadings) appendHits(tail string, hits []*rule) []*rule {
	tr := t.tr
	if tr == nil {
		return hits
	}
	if tr.tails.exact {
		for _, r := range tr.exact[tail] {
			if r.level >= policy.Ask && !slices.Contains(hits, r) {
				hits = append(hits, r)
			}
		}
	}
	if !tr.tails.any {
		return hits
	}
	if !t.scanned {
		t.scan()
	}
	cands := t.spill
	if cands == nil {
		cands = t.buf[:t.n]
	}
	for _, pos := range cands {
		if r := tr.scan[pos]; !slices.Contains(hits, r) && r.m.matchShellAs(tail, true) {
			hits = append(hits, r)
		}
	}
	return hits
}

// scan finds the marked candidates of the command.
func (t *tailReadings) scan() {
	t.scanned = true
	tr := t.tr
	if tr.everyRule() {
		for pos, marked := range tr.tails.marked {
			if marked {
				t.keep(int32(pos))
			}
		}
		return
	}
	var cb [candidateBuf]int32
	cv := callValues{category: CategoryShell, command: t.command}
	for _, pos := range tr.pf.candidates(&cv, cb[:0]) {
		if tr.tails.marked[pos] {
			t.keep(pos)
		}
	}
}

// keep adds a candidate.
func (t *tailReadings) keep(pos int32) {
	switch {
	case t.spill != nil:
		t.spill = append(t.spill, pos)
	case t.n < len(t.buf):
		t.buf[t.n] = pos
		t.n++
	default:
		t.spill = append(slices.Clone(t.buf[:]), pos)
	}
}

// tailMarks are the marked candidates (tailRules) that collect found for a
// call's shell command, so that the tails of its launch readings need no
// scan of their own.
type tailMarks struct {
	command string
	// full is set when buf holds every marked candidate of command.
	full bool
	n    int
	buf  [16]int32
}

// start begins the marks of the values v: only a shell command as written
// is kept.
func (m *tailMarks) start(v *callValues) {
	m.command, m.n = v.command, 0
	m.full = v.category == CategoryShell && !v.pathForms
}

// keep adds a marked candidate; one too many clears full.
func (m *tailMarks) keep(pos int32) {
	if !m.full {
		return
	}
	if m.n == len(m.buf) {
		m.full = false
		return
	}
	m.buf[m.n] = pos
	m.n++
}

// readingList holds the launch readings of a call's commands, found once
// and read by the built-in and the user rules alike: each reading with the
// command it was read from (for the tail shortcut).
type readingList struct {
	filled bool
	n      int
	items  [24]readingItem
	more   []readingItem
}

// readingItem is one launch reading and the command it was read from.
type readingItem struct {
	reading, parent string
}

// fill finds the readings of v's commands, once; a command with more than
// the analysis reads sets v.readingsCut.
func (l *readingList) fill(v *callValues) {
	if l.filled {
		return
	}
	l.filled = true
	var parent string
	add := func(r string) {
		it := readingItem{reading: r, parent: parent}
		if l.n < len(l.items) {
			l.items[l.n] = it
			l.n++
			return
		}
		l.more = append(l.more, it)
	}
	v.eachCommand(func(s string, argv []string) {
		if v.windows && hasUpper(s) {
			// On a Windows workspace GIT is git, wherever it starts a
			// reading (docs/decisions.md#unlisted-launchers).
			low := strings.ToLower(s)
			parent = s
			add(low)
			parent = low
			if !shell.LaunchReadings(low, nil, add) {
				v.readingsCut = true
			}
		}
		parent = s
		if !shell.LaunchReadings(s, argv, add) {
			v.readingsCut = true
		}
	})
}

// each calls f with every reading and the command it was read from.
func (l *readingList) each(f func(reading, parent string)) {
	for _, it := range l.items[:l.n] {
		f(it.reading, it.parent)
	}
	for _, it := range l.more {
		f(it.reading, it.parent)
	}
}

// mayHit reports whether the readings of v's command can add a hit from
// t's rules. They cannot when the command took the fast path (one plain
// command, no Windows folding), every reading of it is a tail
// (shell.Classify's TailsOnly), no literal ask or deny rule could equal a tail, and
// collect found no candidate among the rules marked for tails: then the
// walk over its words is skipped.
func (t *tailReadings) mayHit(v *callValues) bool {
	return v.ctx.sh != nil || v.windows || !v.tailsOnly || t.tr.tails.exact || !t.marks.full || t.marks.command != v.command || t.marks.n > 0
}
