// Package fsview is the engine's view of the real filesystem: it resolves a
// call's paths as the kernel would (symlinks and .. in kernel order), tells
// the kind of the file a bare word names (nothing, a plain file, a folder,
// a symlink) and expands filename globs. It owns only these lookups, given
// to the engine as its Options.ResolvePath, BatchResolvePath, KindOf and
// Glob; it stores nothing and decides nothing.
package fsview
