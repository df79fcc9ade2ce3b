package engine

import (
	"runtime"
	"sync"

	"github.com/toolgate/toolgate/policy"
)

// Compiling a large policy in parallel (100,000 rules must start
// in under 2 s). Compiling one rule reads only the rule and the compiler's
// options and mode; the only shared state is the problem list and the
// duplicate-id check, which are kept out of the parallel part: each chunk
// of rules compiles with its own compiler, and the results are merged in
// file order, so the problems come out in exactly the order a sequential
// compile appends them.

// parallelChunk is the fewest rules worth a goroutine of their own.
const parallelChunk = 2048

// compileRuleSets compiles the built-in rules, the user rules and the
// approval overrides, side by side, and appends their problems to c's in
// that order (as three compileRules calls in a row would).
func (c *compiler) compileRuleSets(builtin, user, overrides []policy.Rule) (b, u, o ruleIndex) {
	sets := [3]struct {
		list []policy.Rule
		path string
		set  ruleSet
		sub  compiler
		out  ruleIndex
	}{
		{list: builtin, path: policy.PathBuiltin, set: setBuiltin},
		{list: user, path: policy.PathRules, set: setUser},
		{list: overrides, path: policy.PathOverrides, set: setOverride},
	}
	var wg sync.WaitGroup
	for i := range sets {
		s := &sets[i]
		s.sub = compiler{opts: c.opts, mode: c.mode, workers: c.workers}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.out = s.sub.compileRules(s.list, s.path, s.set)
		}()
	}
	wg.Wait()
	for i := range sets {
		c.problems = append(c.problems, sets[i].sub.problems...)
	}
	return sets[0].out, sets[1].out, sets[2].out
}

// compiledChunk is one chunk of rules compiled on its own: rules[i] is the
// rule of list[start+i] (nil when it cannot take part) and its problems are
// problems[ends[i-1]:ends[i]].
type compiledChunk struct {
	rules    []*rule
	ends     []int
	problems []policy.Problem
}

// compileChunks compiles list's rules in chunks on up to GOMAXPROCS
// goroutines; a short list compiles on the caller's goroutine.
func (c *compiler) compileChunks(list []policy.Rule, path string, set ruleSet) []compiledChunk {
	n := c.workers
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if max := len(list) / parallelChunk; n > max {
		n = max
	}
	if n < 1 {
		n = 1
	}
	chunks := make([]compiledChunk, n)
	size := (len(list) + n - 1) / n
	var wg sync.WaitGroup
	for k := range chunks {
		start, end := min(k*size, len(list)), min((k+1)*size, len(list))
		ch := &chunks[k]
		work := func() {
			sub := compiler{opts: c.opts, mode: c.mode, workers: c.workers}
			ch.rules = make([]*rule, 0, end-start)
			ch.ends = make([]int, 0, end-start)
			for i := start; i < end; i++ {
				pr := &list[i]
				ch.rules = append(ch.rules, sub.compileRule(pr, func() string { return policy.ItemPath(path, pr.Index) }, set))
				ch.ends = append(ch.ends, len(sub.problems))
			}
			ch.problems = sub.problems
		}
		if n == 1 {
			work()
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	wg.Wait()
	return chunks
}
