package fsview

import "github.com/toolgate/toolgate/engine"

// Lookups returns o with this package's lookups of the real filesystem in
// every slot the engine reads them from (path resolution, one resolver per
// batch, the kind a bare word names, through the per-call cache, and
// filename globs), so that every engine that decides on a real workspace,
// the server's and `toolgate test --filesystem`, looks it up the same way.
func Lookups(o engine.Options) engine.Options {
	o.ResolvePath, o.BatchResolvePath = ResolvePath, NewBatchResolver
	o.KindOf, o.CallKindOf, o.Glob = KindOf, CallKindOf, Glob
	return o
}
