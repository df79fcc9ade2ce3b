package engine

// maxBatchKinds bounds the bare-word lookups one batch remembers.
const maxBatchKinds = 8192

// EvaluateBatch decides reqs in order, as Evaluate does each, into out
// (which must be as long as reqs). The calls are one snapshot: paths are
// resolved through one Options.BatchResolvePath resolver when it is set, so
// calls that share directories look each one up once, and each bare word's
// KindOf answer is remembered for the batch, so the same word in a
// thousand calls costs one system call, not a thousand. Nothing is kept
// after the batch: the next request sees the filesystem as it is then.
func (e *Engine) EvaluateBatch(reqs []Request, out []Decision) {
	b := e
	if e.opts.BatchResolvePath != nil || e.opts.KindOf != nil && len(reqs) > 1 {
		c := *e
		if e.opts.BatchResolvePath != nil {
			c.opts.ResolvePath = e.opts.BatchResolvePath()
		}
		if e.opts.KindOf != nil && len(reqs) > 1 {
			kind := e.opts.KindOf
			if e.opts.CallKindOf != nil {
				kind = e.opts.CallKindOf()
			}
			c.opts.KindOf, c.opts.CallKindOf = batchKinds(kind), nil
		}
		b = &c
	}
	for i := range reqs {
		out[i] = b.Evaluate(&reqs[i])
	}
}

// batchKinds remembers kind's answers for one batch (decided in order, on
// one goroutine), up to maxBatchKinds paths.
func batchKinds(kind func(string) FileKind) func(string) FileKind {
	seen := make(map[string]FileKind)
	return func(p string) FileKind {
		if k, ok := seen[p]; ok {
			return k
		}
		k := kind(p)
		if len(seen) < maxBatchKinds {
			seen[p] = k
		}
		return k
	}
}
