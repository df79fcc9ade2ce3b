package engine

import (
	"cmp"
	"slices"
	"sync"

	"github.com/toolgate/toolgate/engine/glob"
	"github.com/toolgate/toolgate/policy"
)

// toolRules are the rules of one tool: shell rules with a literal pattern are
// found by one map lookup of the command; the rest are scanned, but only the
// candidates the prefilter names run their matcher.
type toolRules struct {
	exact map[string][]*rule
	scan  []*rule
	pf    *ruleFilter
	// addDirs are the /add-dir shell overrides among scan
	// (override.go addDirSpellings).
	addDirs []*rule
	// tails marks the rules a tail of a command can meet alone
	// (index_readings.go).
	tails tailRules
	// args are the match_type: args rules, matched against the arguments'
	// canonical JSON (args_match.go), with their own prefilter.
	args   []*rule
	argsPF *ruleFilter
}

func newRuleIndex(rules []*rule) ruleIndex {
	idx := ruleIndex{all: rules, byTool: map[string]*toolRules{}, byName: make(map[string][]*rule, len(rules))}
	named := mcpToolsNamed(rules)
	for _, r := range rules {
		idx.byName[r.name] = append(idx.byName[r.name], r)
		for _, t := range r.tools {
			tr := idx.add(t, r)
			server, ok := mcpServerWildcard(t)
			if !ok {
				continue
			}
			// mcp__SERVER__*: every tool of the server. A tool of it that
			// some rule names has its own list, which holds the server's
			// rules too, in file order; any other tool of it finds the
			// server's list (rulesOf). So a call still costs one lookup.
			if idx.byServer == nil {
				idx.byServer = map[string]*toolRules{}
			}
			idx.byServer[server] = tr
			for _, tool := range named[server] {
				if !slices.Contains(r.tools, tool) {
					idx.add(tool, r)
				}
			}
		}
	}
	// A rule listing several tools is in several scan lists; its keys are
	// computed once.
	memo := make(map[*rule]ruleKeys, len(rules))
	keys := func(r *rule) (ruleKeys, bool) {
		if rk, done := memo[r]; done {
			return rk, rk.keys != nil
		}
		rk, ok := keysOf(r.m, r.category)
		if !ok {
			rk = ruleKeys{}
		}
		memo[r] = rk
		return rk, ok
	}
	for _, tr := range idx.byTool {
		if len(tr.scan) > 0 {
			tr.pf = newPrefilter(tr.scan, keys)
		}
		if len(tr.args) > 0 {
			tr.argsPF = newPrefilter(tr.args, keys)
		}
		tr.markTails()
	}
	for _, r := range rules {
		r.m.dropTrees() // the keys are known; the trees would only hold memory
	}
	return idx
}

// add puts rule r in the list of tool t and returns that list. A rule
// that names a tool twice (or a tool and its server's mcp__SERVER__*) is
// in the list once: rules arrive in file order, so it would be the last.
func (idx *ruleIndex) add(t string, r *rule) *toolRules {
	tr := idx.byTool[t]
	if tr == nil {
		tr = &toolRules{}
		idx.byTool[t] = tr
	}
	switch {
	case r.args:
		if !isLast(tr.args, r) {
			tr.args = append(tr.args, r)
		}
	case r.category == CategoryShell && !r.m.isRegex && !r.m.hasWild:
		if tr.exact == nil {
			tr.exact = map[string][]*rule{}
		}
		if !isLast(tr.exact[r.m.exact], r) {
			tr.exact[r.m.exact] = append(tr.exact[r.m.exact], r)
		}
	case !isLast(tr.scan, r):
		tr.scan = append(tr.scan, r)
		if r.addDir != "" {
			tr.addDirs = append(tr.addDirs, r)
		}
	}
	return tr
}

// isLast reports whether r is the last rule of list.
func isLast(list []*rule, r *rule) bool { return len(list) > 0 && list[len(list)-1] == r }

// mcpToolsNamed lists, by server, the MCP tools (mcp__SERVER__TOOL, not
// the wildcard) the rules name, each once.
func mcpToolsNamed(rules []*rule) map[string][]string {
	var named map[string][]string
	for _, r := range rules {
		for _, t := range r.tools {
			server, tool, ok := SplitMCPTool(t)
			if !ok || tool == MCPWildcard || slices.Contains(named[server], t) {
				continue
			}
			if named == nil {
				named = map[string][]string{}
			}
			named[server] = append(named[server], t)
		}
	}
	return named
}

// rulesOf returns the rules of a tool: its own list, else, for an MCP tool
// no rule names, the list of its server's mcp__SERVER__* rules; nil when
// there are none.
func (idx *ruleIndex) rulesOf(tool string) *toolRules {
	if tr := idx.byTool[tool]; tr != nil {
		return tr
	}
	if idx.byServer == nil {
		return nil
	}
	server, _, ok := SplitMCPTool(tool)
	if !ok {
		return nil
	}
	return idx.byServer[server]
}

// callValues are the values of one call that rules match against.
type callValues struct {
	category Category
	command  string   // shell: the command
	slashed  string   // shell: the command with \ as / (for literal lookups)
	paths    []string // path: every path value, plus ~ / $HOME expansions
	// norms are the normalized commands of a shell call that needed the
	// full analysis (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm); ask and deny rules match them too.
	norms []string
	// readings turns on the launch readings of the command (launch.go):
	// like norms, they add ask and deny hits only.
	readings bool
	// pathForms marks the resolved and cleaned forms of a call's path
	// values (paths_rules.go): a shell rule matches them as paths.
	pathForms bool
	// windows marks a shell call on a Windows workspace whose program is
	// written with an upper-case letter: it is also read in lower case.
	windows bool
	// readingsCut is set when a command had more launch readings than are
	// read: no rule may allow it.
	readingsCut bool
	// tailsOnly: the command took the fast path and every launch reading
	// of it is a tail (shell.Classify).
	tailsOnly bool
	// normAdded is set when a normalized command added a hit.
	normAdded bool
	// strictOnly marks the values of a normalized command: only its ask
	// and deny hits count, so allow rules are not run on it.
	strictOnly bool
	// ctx is what approval overrides are checked against (override.go).
	ctx overrideCtx
	// argsJSON is the canonical JSON of the arguments once an args rule
	// needed it; argsState says whether it was written (args_match.go).
	argsJSON  string
	argsState uint8
}

// pathValueBufs hold the path values of calls being evaluated.
var pathValueBufs = sync.Pool{New: func() any { b := make([]string, 0, 8); return &b }}

// releasePathValues returns a buffer of pathValueBufs, keeping its growth
// and dropping its strings.
func releasePathValues(buf *[]string, used []string) {
	clear(used)
	*buf = used[:0]
	pathValueBufs.Put(buf)
}

// matches reports whether rule r matches the call.
func (v *callValues) matches(r *rule) bool {
	switch r.category {
	case CategoryShell:
		if v.pathForms {
			for _, p := range v.paths {
				if r.m.matchPathAs(p, true) {
					return true
				}
			}
			return false
		}
		return v.category == CategoryShell && r.m.matchShellAs(v.command, v.strictOnly)
	case CategoryPath:
		if v.category != CategoryPath {
			return false
		}
		for _, p := range v.paths {
			if r.m.matchPathAs(p, v.strictOnly) {
				return true
			}
		}
	}
	return false
}

// candidateBuf is the stack size of the candidate list; more candidates
// spill to the heap.
const candidateBuf = 64

// everyRule reports whether every scanned rule is a candidate: no rule of
// the tool has a key, so there is no automaton to run.
func (tr *toolRules) everyRule() bool { return tr.pf == nil || tr.pf.ac == nil }

// collect appends to hits every rule of idx for tool that matches the call,
// in file order: the literal hits of the exact map merged with the
// candidates that match.
func (idx *ruleIndex) collect(tool string, v *callValues, hits []*rule) []*rule {
	return idx.collectMarking(tool, v, hits, nil)
}

// collectAll appends every rule of idx that the call hits: collect's, those
// a normalized command hits and those a launch reading hits. marks and list
// are found once for all the sets a call is checked against.
func (idx *ruleIndex) collectAll(tool string, v *callValues, hits []*rule, marks *tailMarks, list *readingList) []*rule {
	hits = idx.collectMarking(tool, v, hits, marks)
	hits = idx.collectNormalized(tool, v, hits)
	return idx.collectReadings(tool, v, hits, marks, list)
}

// collectMarking is collect that also keeps, in marks when it is not nil,
// the candidates of a shell command that tails of its launch readings can
// meet alone (index_readings.go), so that they need no scan of their own.
func (idx *ruleIndex) collectMarking(tool string, v *callValues, hits []*rule, marks *tailMarks) []*rule {
	tr := idx.rulesOf(tool)
	if tr == nil {
		return hits
	}
	hits = tr.collectValues(v, hits, marks)
	if len(tr.args) > 0 {
		hits = tr.argsHits(v, hits) // args_match.go
	}
	return hits
}

// collectValues is collectMarking for the rules that match the call's
// command or path values.
func (tr *toolRules) collectValues(v *callValues, hits []*rule, marks *tailMarks) []*rule {
	if marks != nil {
		marks.start(v)
	}
	var exact []*rule
	if tr.exact != nil && v.category == CategoryShell {
		exact = tr.exact[v.slashed]
	} else if tr.exact != nil && v.pathForms {
		exact = exactPathHits(tr.exact, v)
	}
	if tr.everyRule() {
		for pos, r := range tr.scan {
			if (!v.strictOnly || r.level >= policy.Ask) && v.matches(r) {
				hits, exact = mergeHit(hits, exact, r)
			}
			if marks != nil && tr.tails.any && tr.tails.marked[pos] {
				marks.keep(int32(pos))
			}
		}
		return append(hits, exact...)
	}
	var cb [candidateBuf]int32
	for _, pos := range tr.pf.candidates(v, cb[:0]) {
		if r := tr.scan[pos]; (!v.strictOnly || r.level >= policy.Ask) && v.matches(r) {
			hits, exact = mergeHit(hits, exact, r)
		}
		if marks != nil && tr.tails.any && tr.tails.marked[pos] {
			marks.keep(pos)
		}
	}
	return append(hits, exact...)
}

// collectNormalized appends to hits every ask or deny rule of idx for tool
// that matches a normalized command of the call and is not a hit yet, then
// keeps the hits in file order. A normalized form only ever adds a stricter
// hit: allow rules keep matching the raw command alone (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
func (idx *ruleIndex) collectNormalized(tool string, v *callValues, hits []*rule) []*rule {
	if len(v.norms) == 0 || idx.rulesOf(tool) == nil {
		return hits
	}
	added := false
	for _, n := range v.norms {
		nv := callValues{category: CategoryShell, command: n, slashed: slashes(n), strictOnly: true}
		var buf [8]*rule
		// strictOnly: collect returns only ask and deny rules.
		for _, r := range idx.collect(tool, &nv, buf[:0]) {
			if !slices.Contains(hits, r) {
				hits = append(hits, r)
				added = true
			}
		}
	}
	if added {
		v.normAdded = true
		slices.SortStableFunc(hits, func(a, b *rule) int { return cmp.Compare(a.order, b.order) })
	}
	return hits
}

// collectReadings appends to hits every ask or deny rule of idx for tool
// that matches a launch reading of the call (launch.go) and is not a hit
// yet, then keeps the hits in file order.
func (idx *ruleIndex) collectReadings(tool string, v *callValues, hits []*rule, marks *tailMarks, list *readingList) []*rule {
	if !v.readings || idx.rulesOf(tool) == nil {
		return hits
	}
	n := len(hits)
	// The values as written, matched strictly: a deny or ask glob's * and ?
	// match any character there (docs/decisions.md#deny-globs-match-any-character).
	if v.outsideClass() {
		raw := callValues{category: v.category, command: v.command, slashed: v.slashed, paths: v.paths, strictOnly: true}
		var rbuf [8]*rule
		for _, h := range idx.collect(tool, &raw, rbuf[:0]) {
			if !slices.Contains(hits, h) {
				hits = append(hits, h)
			}
		}
	}
	tails := tailReadings{tr: idx.rulesOf(tool)}
	if marks != nil {
		tails.marks = *marks
	}
	// When every reading is a tail and no anchored rule is a candidate,
	// the readings can add nothing and are not walked (index_readings.go).
	if v.category == CategoryShell && tails.mayHit(v) {
		list.fill(v)
		list.each(func(r, parent string) {
			if parent != tails.command {
				tails.from(parent)
			}
			if tails.isTail(r) {
				// Only a rule anchored at the tail's start can add a hit
				// (index_readings.go).
				hits = tails.appendHits(r, hits)
				return
			}
			nv := callValues{category: CategoryShell, command: r, slashed: slashes(r), strictOnly: true}
			var buf [8]*rule
			for _, h := range idx.collect(tool, &nv, buf[:0]) {
				if !slices.Contains(hits, h) {
					hits = append(hits, h)
				}
			}
		})
	}
	if len(hits) > n {
		v.normAdded = true
		slices.SortStableFunc(hits, func(a, b *rule) int { return cmp.Compare(a.order, b.order) })
	}
	return hits
}

// outsideClass reports whether a value of the call has a character that a
// strict glob matches and the reference's class does not: only then can
// the values as written meet a deny or ask rule strictly that they did not
// meet as the reference matched them.
func (v *callValues) outsideClass() bool {
	if v.category == CategoryShell {
		return glob.OutsideClass(v.command)
	}
	for _, p := range v.paths {
		if glob.OutsideClass(p) {
			return true
		}
	}
	return false
}

// eachCommand calls f with each simple command of a shell call that has
// launch readings: the command itself when it took the fast path, else
// every normalized command of its analysis with its words.
func (v *callValues) eachCommand(f func(s string, argv []string)) {
	sh := v.ctx.sh
	if sh == nil {
		f(v.command, nil)
		return
	}
	for i, argv := range sh.Argv {
		if i < len(sh.Normalized) {
			f(sh.Normalized[i], argv)
		}
	}
}

// exactPathHits returns the literal shell rules that match a path form of
// the call as a path (the form or one of its parents, as p or p/), in file
// order, as matchPath would find them.
func exactPathHits(exact map[string][]*rule, v *callValues) []*rule {
	var out []*rule
	add := func(key string) {
		for _, r := range exact[key] {
			if (!v.strictOnly || r.level >= policy.Ask) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	for _, p := range v.paths {
		nv := slashes(p)
		add(nv)
		for i := len(nv) - 1; i >= 0; i-- {
			if nv[i] != '/' {
				continue
			}
			if i == 0 {
				add("/")
				add("//") // the root parent as p/
				continue
			}
			add(nv[:i])
			add(nv[:i+1])
		}
	}
	slices.SortStableFunc(out, func(a, b *rule) int { return cmp.Compare(a.order, b.order) })
	return out
}

// mergeHit appends the exact hits that come before r in file order, then r.
func mergeHit(hits, exact []*rule, r *rule) ([]*rule, []*rule) {
	for len(exact) > 0 && exact[0].order < r.order {
		hits = append(hits, exact[0])
		exact = exact[1:]
	}
	return append(hits, r), exact
}

// first returns the first rule of idx in file order for tool that matches.
func (idx *ruleIndex) first(tool string, v *callValues) *rule {
	tr := idx.rulesOf(tool)
	if tr == nil {
		return nil
	}
	best := tr.firstValue(v)
	if len(tr.args) > 0 {
		var buf [8]*rule
		if hits := tr.argsHits(v, buf[:0]); len(hits) > 0 && (best == nil || hits[0].order < best.order) {
			best = hits[0]
		}
	}
	return best
}

// firstValue is first for the rules that match the call's command or
// path values.
func (tr *toolRules) firstValue(v *callValues) *rule {
	var best *rule
	if tr.exact != nil && v.category == CategoryShell {
		if rs := tr.exact[v.slashed]; len(rs) > 0 {
			best = rs[0]
		}
	}
	if tr.everyRule() {
		for _, r := range tr.scan {
			if best != nil && r.order > best.order {
				break
			}
			if v.matches(r) {
				return r
			}
		}
		return best
	}
	var cb [candidateBuf]int32
	for _, pos := range tr.pf.candidates(v, cb[:0]) {
		r := tr.scan[pos]
		if best != nil && r.order > best.order {
			break
		}
		if v.matches(r) {
			return r
		}
	}
	return best
}
