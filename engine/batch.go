package engine

// EvaluateBatch decides reqs in order, as Evaluate does each, into out
// (which must be as long as reqs). The calls are one snapshot: paths are
// resolved through one Options.BatchResolvePath resolver when it is set, so
// calls that share directories look each one up once.
func (e *Engine) EvaluateBatch(reqs []Request, out []Decision) {
	b := e
	if e.opts.BatchResolvePath != nil {
		c := *e
		c.opts.ResolvePath = e.opts.BatchResolvePath()
		b = &c
	}
	for i := range reqs {
		out[i] = b.Evaluate(&reqs[i])
	}
}
