package engine

// resolvedPathRules applies the ask and deny rules of a tiered policy to
// the resolved forms of a path tool's values that lie outside the
// workspace and differ from the value as written (through a symlink or
// ..): read_file rootlink/etc/shadow meets a deny rule for /etc/shadow, as
// the call reads that file (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm). Like a normalized shell command,
// a resolved form only adds an ask or deny: a deny always stands, an ask
// only over an allow that no approval override gave. It returns whether
// the decision changed.
func (e *Engine) resolvedPathRules(d *Decision, tool string, moved []string, tr *tracer) bool {
	p := e.policy
	if !p.tiered || len(moved) == 0 || d.Level == Deny {
		return false
	}
	nv := callValues{category: CategoryPath, paths: moved}
	var bbuf, ubuf [8]*rule
	var out outcome
	found := false
	for _, set := range [...]struct {
		idx  *ruleIndex
		buf  []*rule
		base string
	}{{&p.builtin, bbuf[:0], "tiered_policy:builtin:"}, {&p.user, ubuf[:0], "tiered_policy:rules:"}} {
		var hits []*rule
		for _, r := range set.idx.collect(tool, &nv, set.buf) {
			if r.level == Ask || r.level == Deny {
				hits = append(hits, r)
			}
		}
		if len(hits) == 0 {
			continue
		}
		o := finalize(hits, set.base)
		if !found || o.level > out.level {
			out, found = o, true
		}
	}
	if !found || out.level <= d.Level || out.level == Ask && d.FromOverride {
		return false
	}
	d.Level, d.MatchedRule, d.FromOverride = out.level, out.rule, false
	tr.add(Step{Name: "resolved_paths", Result: out.level.String(), Rule: out.rule, Hits: moved,
		Detail: "a path value resolves (through a symlink or ..) to a place a stricter rule names", Decisive: true})
	return true
}
