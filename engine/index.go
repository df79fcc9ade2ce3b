package engine

// toolRules are the rules of one tool: shell rules with a literal pattern are
// found by one map lookup of the command; the rest are scanned.
type toolRules struct {
	exact map[string][]*rule
	scan  []*rule
}

func newRuleIndex(rules []*rule) ruleIndex {
	idx := ruleIndex{all: rules, byTool: map[string]*toolRules{}}
	for _, r := range rules {
		for _, t := range r.tools {
			tr := idx.byTool[t]
			if tr == nil {
				tr = &toolRules{}
				idx.byTool[t] = tr
			}
			if r.category == CategoryShell && !r.m.isRegex && !r.m.hasWild {
				if tr.exact == nil {
					tr.exact = map[string][]*rule{}
				}
				tr.exact[r.m.exact] = append(tr.exact[r.m.exact], r)
				continue
			}
			tr.scan = append(tr.scan, r)
		}
	}
	return idx
}

// callValues are the values of one call that rules match against.
type callValues struct {
	category Category
	command  string   // shell: the command
	slashed  string   // shell: the command with \ as / (for literal lookups)
	paths    []string // path: every path value, plus ~ / $HOME expansions
}

// matches reports whether rule r matches the call.
func (v *callValues) matches(r *rule) bool {
	switch r.category {
	case CategoryShell:
		return v.category == CategoryShell && r.m.matchShell(v.command)
	case CategoryPath:
		if v.category != CategoryPath {
			return false
		}
		for _, p := range v.paths {
			if r.m.matchPath(p) {
				return true
			}
		}
	}
	return false
}

// collect appends to hits every rule of idx for tool that matches the call.
func (idx *ruleIndex) collect(tool string, v *callValues, hits []*rule) []*rule {
	tr := idx.byTool[tool]
	if tr == nil {
		return hits
	}
	if tr.exact != nil && v.category == CategoryShell {
		hits = append(hits, tr.exact[v.slashed]...)
	}
	for _, r := range tr.scan {
		if v.matches(r) {
			hits = append(hits, r)
		}
	}
	return hits
}

// first returns the first rule of idx in file order for tool that matches.
func (idx *ruleIndex) first(tool string, v *callValues) *rule {
	tr := idx.byTool[tool]
	if tr == nil {
		return nil
	}
	var best *rule
	if tr.exact != nil && v.category == CategoryShell {
		if rs := tr.exact[v.slashed]; len(rs) > 0 {
			best = rs[0]
		}
	}
	for _, r := range tr.scan {
		if best != nil && r.order > best.order {
			break
		}
		if v.matches(r) {
			if best == nil || r.order < best.order {
				best = r
			}
			break
		}
	}
	return best
}
