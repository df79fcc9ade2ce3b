package engine

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync/atomic"

	"github.com/toolgate/toolgate/engine/glob"
	"github.com/toolgate/toolgate/engine/prefilter"
	"github.com/toolgate/toolgate/engine/shell"
)

// ErrEmptyPattern is returned for a rule whose pattern is empty.
var ErrEmptyPattern = errors.New("pattern is empty")

// PatternError is a pattern RE2 cannot compile.
type PatternError struct {
	Pattern string
	Err     error
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("invalid regular expression %q: %v", e.Pattern, e.Err)
}

func (e *PatternError) Unwrap() error { return e.Err }

// matcher is one compiled rule pattern. It is small (a policy of 100,000
// rules keeps 100,000 of them): a glob needs raw, exact or glob; a re:
// pattern's parts are behind re.
type matcher struct {
	raw string
	// glob patterns: exact is the normalized literal when there is no
	// wildcard; glob the anchored regexp otherwise.
	exact string
	glob  *glob.Program
	// re holds a re: pattern's alternatives; nil for a glob.
	re      *regexParts
	isRegex bool
	// needsBackslash is set (while the index is built) for a re: pattern
	// every match of which holds a literal backslash.
	needsBackslash bool
	hasWild        bool
}

// regexParts are a re: pattern's alternatives: every one that parses; a
// hit on any is a hit. Each is checked with regexp/syntax when the rule is
// compiled, and compiled to a regexp the first time the rule runs (res), so
// that a policy of 100,000 rules does not build 100,000 programs of which a
// call runs a handful. trees are the parse trees of exprs for the
// prefilter's keys; newRuleIndex drops them once the keys are known.
type regexParts struct {
	exprs []string
	trees []*syntax.Regexp
	res   atomic.Pointer[compiledRegex]
}

// ValidatePattern reports whether a rule pattern compiles: a non-empty glob
// always does; a re: pattern must be RE2, or contain | with at least one
// alternative that is.
func ValidatePattern(pattern string) error {
	m, partial, err := compilePattern(pattern)
	if err != nil {
		return err
	}
	_ = m
	return partial
}

// compilePattern compiles a rule pattern. partial is non-nil when a re:
// pattern only compiled alternative by alternative: it is usable, and worth
// reporting.
func compilePattern(p string) (m *matcher, partial error, err error) {
	if strings.TrimSpace(p) == "" {
		return nil, nil, ErrEmptyPattern
	}
	if expr, ok := strings.CutPrefix(p, "re:"); ok {
		return compileRegex(p, expr)
	}
	return compileGlob(p), nil, nil
}

func compileRegex(raw, expr string) (*matcher, error, error) {
	rp := &regexParts{}
	m := &matcher{raw: raw, isRegex: true, re: rp}
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err == nil {
		rp.exprs = []string{expr}
		rp.trees = []*syntax.Regexp{tree}
		return m, nil, nil
	}
	whole := &PatternError{Pattern: expr, Err: err}
	if !strings.Contains(expr, "|") {
		return nil, nil, whole
	}
	for _, alt := range strings.Split(expr, "|") {
		if alt == "" {
			continue
		}
		if tree, aerr := syntax.Parse(alt, syntax.Perl); aerr == nil {
			rp.exprs = append(rp.exprs, alt)
			rp.trees = append(rp.trees, tree)
		}
	}
	if len(rp.exprs) == 0 {
		return nil, nil, whole
	}
	return m, fmt.Errorf("%w; only the alternatives that compile are used", whole), nil
}

// compiledRegex is a re: pattern's compiled alternatives, each with its
// literal condition.
type compiledRegex struct {
	res   []*regexp.Regexp
	conds []prefilter.Cond
}

// regexps returns the compiled alternatives and their conditions,
// compiling them on first use. Concurrent first uses may both compile; one
// result is kept.
func (m *matcher) regexps() *compiledRegex {
	rp := m.re
	if c := rp.res.Load(); c != nil {
		return c
	}
	c := &compiledRegex{}
	for _, expr := range rp.exprs {
		// regexp.Compile parses with syntax.Perl as compileRegex did, so it
		// cannot fail here; an error would only drop the alternative.
		tree, err := syntax.Parse(expr, syntax.Perl)
		if err != nil {
			continue
		}
		if c.addSplit(expr, tree) {
			continue
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			continue
		}
		c.res = append(c.res, re)
		c.conds = append(c.conds, prefilter.CondOf(tree))
	}
	if !rp.res.CompareAndSwap(nil, c) {
		return rp.res.Load()
	}
	return c
}

// minSplitLen is the length from which a regexp whose top level is an
// alternation is compiled one alternative at a time.
const minSplitLen = 200

// addSplit compiles a long regexp whose top level is an alternation as its
// alternatives, each with its own literal condition: a search matches when
// one alternative does, only the alternatives whose condition holds run,
// and each is a small program that regexp runs faster than the whole
// (a large one is searched by the slower NFA). It reports false, adding
// nothing, when expr is not such a regexp or an alternative does not
// compile.
func (c *compiledRegex) addSplit(expr string, tree *syntax.Regexp) bool {
	if len(expr) < minSplitLen || tree.Op != syntax.OpAlternate || len(tree.Sub) < 2 {
		return false
	}
	res := make([]*regexp.Regexp, 0, len(tree.Sub))
	for _, sub := range tree.Sub {
		re, err := regexp.Compile(sub.String())
		if err != nil {
			return false
		}
		res = append(res, re)
	}
	for i, sub := range tree.Sub {
		c.res = append(c.res, res[i])
		c.conds = append(c.conds, prefilter.CondOf(sub))
	}
	return true
}

// tree is the parse tree of alternative i: the one kept from compiling, or
// a new parse once dropTrees released them. ok is false when it does not
// parse (an alternative that did at compile time always does).
func (rp *regexParts) tree(i int) (tree *syntax.Regexp, ok bool) {
	if i < len(rp.trees) {
		return rp.trees[i], true
	}
	tree, err := syntax.Parse(rp.exprs[i], syntax.Perl)
	return tree, err == nil
}

// dropTrees releases the parse trees once the prefilter has its keys.
func (m *matcher) dropTrees() {
	if m.re != nil {
		m.re.trees = nil
	}
}

func compileGlob(raw string) *matcher {
	p := strings.ReplaceAll(raw, `\`, "/")
	m := &matcher{raw: raw}
	if !strings.ContainsAny(p, "*?[") {
		m.exact = p
		return m
	}
	m.hasWild = true
	m.glob = glob.Compile(p)
	return m
}

// matchRegex searches v, then v with \ replaced by /, running only the
// alternatives whose literal condition v meets.
func (m *matcher) matchRegex(v string) bool {
	if m.needsBackslash && strings.IndexByte(v, '\\') < 0 {
		return false
	}
	c := m.regexps()
	// The literal conditions hold alike for v and v with \ as /: they
	// compare folded bytes, and the fold maps \ to /.
	filter := len(v) <= prefilter.MaxCondValue
	nonASCII := filter && prefilter.HasNonASCII(v)
	mayMatch := func(i int) bool { return !filter || c.conds[i].Holds(v, nonASCII) }
	for i, re := range c.res {
		if mayMatch(i) && re.MatchString(v) {
			return true
		}
	}
	if strings.IndexByte(v, '\\') < 0 {
		return false
	}
	slashed := strings.ReplaceAll(v, `\`, "/")
	for i, re := range c.res {
		if mayMatch(i) && re.MatchString(slashed) {
			return true
		}
	}
	return false
}

// strict makes the matcher's glob * and ? match any character, as deny
// and ask rules need (docs/decisions.md#deny-globs-match-any-character).
func (m *matcher) strict() {
	if m != nil && m.glob != nil {
		m.glob.StrictAnyChar()
	}
}

func (m *matcher) matchGlobAs(v string, strict bool) bool {
	if !m.hasWild {
		return v == m.exact
	}
	return m.glob.Match(v, strict)
}

// matchShell matches the whole command string.
func (m *matcher) matchShell(v string) bool { return m.matchShellAs(v, false) }

// matchShellAs matches the whole command string; strict is the matching
// of a deny or ask rule's stricter reading, where its glob's * and ? match
// any character.
func (m *matcher) matchShellAs(v string, strict bool) bool {
	if m.isRegex {
		return m.matchRegex(v)
	}
	return m.matchGlobAs(slashes(v), strict)
}

// matchPath matches one path value; a glob also tries every parent p of the
// value as p and p/ (p/* can never match: a glob * does not match a literal *).
func (m *matcher) matchPath(v string) bool { return m.matchPathAs(v, false) }

// matchPathAs is matchPath; strict as for matchShellAs.
func (m *matcher) matchPathAs(v string, strict bool) bool {
	if m.isRegex {
		return m.matchRegex(v)
	}
	nv := slashes(v)
	if m.hasWild {
		return m.glob.MatchPathOrParent(nv, strict)
	}
	if nv == m.exact {
		return true
	}
	for i := len(nv) - 1; i >= 0; i-- {
		if nv[i] != '/' {
			continue
		}
		parent := nv[:i]
		if i == 0 {
			parent = "/"
		}
		// Lengths are compared first, so this loop is linear.
		if parent == m.exact || len(m.exact) == len(parent)+1 && m.exact[len(parent)] == '/' && m.exact[:len(parent)] == parent {
			return true
		}
	}
	return false
}

// slashes replaces \ with /, allocating only when there is a \.
func slashes(v string) string { return shell.Slashes(v) }
