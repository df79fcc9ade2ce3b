package engine

import (
	"regexp/syntax"
	"slices"
	"strings"
)

// readingRules are the ask and deny shell rules of one tool that a launch
// reading (shell/launch.go) can meet when the command it was read from does
// not. Most readings are a tail of that command, starting after a blank or
// a slash, and the command itself is matched strictly too; so a rule that
// matches wherever its text starts can meet the tail only if it met the
// command already, and is left out here:
//   - a glob that starts with * (in a strict match * takes the head too);
//   - a re: pattern with no ^ or \A (a search finds the same match in the
//     command; \b and \B see a non-word character before the tail either way).
//
// What is left is found as collect finds rules, with one difference: every
// key a tail holds its command holds, so the command is scanned once for
// the candidates of all its tails. Readings that are not a tail of their
// command (a name without .exe, git's own programs, a subcommand after
// options) meet every rule (collect).
type readingRules struct {
	exact map[string][]*rule // literal patterns, by the pattern
	scan  []*rule            // the other rules, in file order
	pf    *prefilter
}

// newReadingRules indexes the ask and deny shell rules among a tool's
// rules that a tail can meet alone; nil when there are none. keys are the
// prefilter keys of a rule (newRuleIndex).
func newReadingRules(rules []*rule, keys func(*rule) (ruleKeys, bool)) *readingRules {
	rr := &readingRules{}
	for _, r := range rules {
		if r.category != CategoryShell || r.level < Ask || startsAnywhere(r.m) {
			continue
		}
		if !r.m.isRegex && !r.m.hasWild {
			if rr.exact == nil {
				rr.exact = map[string][]*rule{}
			}
			rr.exact[r.m.exact] = append(rr.exact[r.m.exact], r)
			continue
		}
		rr.scan = append(rr.scan, r)
	}
	if rr.exact == nil && rr.scan == nil {
		return nil
	}
	if len(rr.scan) > 0 {
		rr.pf = newPrefilter(rr.scan, keys)
	}
	return rr
}

// startsAnywhere reports whether every match of m in a tail of a value
// (starting after a blank or a slash) is also a match in the value: a glob
// that starts with *, or a re: pattern without a start-of-text anchor.
func startsAnywhere(m *matcher) bool {
	if !m.isRegex {
		return m.hasWild && strings.HasPrefix(m.raw, "*")
	}
	for i, expr := range m.re.exprs {
		var tree *syntax.Regexp
		if i < len(m.re.trees) {
			tree = m.re.trees[i]
		} else {
			var err error
			if tree, err = syntax.Parse(expr, syntax.Perl); err != nil {
				return false
			}
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

// tailReadings matches the tails of one command against a tool's
// readingRules: the command's candidates are found once, on its first tail.
type tailReadings struct {
	rr      *readingRules
	command string
	scanned bool
	// cands are the candidates' positions: buf[:n], or spill when there
	// are more than buf holds (a slice into buf would move t to the heap).
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
// in full, as its / form): the readings for which only readingRules can add
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
	rr := t.rr
	if rr == nil {
		return hits
	}
	for _, r := range rr.exact[tail] {
		if !slices.Contains(hits, r) {
			hits = append(hits, r)
		}
	}
	if rr.pf == nil {
		return hits
	}
	if !t.scanned {
		t.scanned = true
		cv := callValues{category: CategoryShell, command: t.command}
		cands := rr.pf.candidates(&cv, t.buf[:0])
		if t.n = len(cands); t.n > len(t.buf) {
			t.spill = slices.Clone(cands)
		}
	}
	cands := t.spill
	if cands == nil {
		cands = t.buf[:t.n]
	}
	for _, pos := range cands {
		if r := rr.scan[pos]; !slices.Contains(hits, r) && r.m.matchShellAs(tail, true) {
			hits = append(hits, r)
		}
	}
	return hits
}
