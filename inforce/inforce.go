// Package inforce holds the engine in force. It compiles the policy
// document the store keeps, once per change (at open, at each outside edit
// the store reloads, at each write, where the same compile is the edit's
// validation), and serves the engine deciding calls now, seen through the
// view the grants give. It owns the engine's options (the path resolver
// and the filesystem view) and that view. It does not own the document,
// its edits, their validation rules or their storage (package store), nor
// the grants themselves (package grant).
package inforce

import (
	"context"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/engine/builtin"
	"github.com/toolgate/toolgate/fsview"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
)

// Holder is the policy store together with the engine in force. The
// store's snapshot carries the compiled engine beside the document it was
// compiled from, so that a write, once it returns, already decides with
// the new policy, and Engine, Problems and Section change in one atomic
// swap. The store's own methods (document reads and edits) are promoted.
type Holder struct {
	*store.Store
	*shared
}

// shared is what every view of a Holder (IfMatch) shares.
type shared struct {
	opts engine.Options
	// view is what SetEngineView gave; nil shows the engine as compiled.
	view atomic.Pointer[func(*engine.Engine) *engine.Engine]
}

// IfMatch is store.Store.IfMatch with the same engine in force: its edits
// succeed only when the section has the ETag tag.
func (h *Holder) IfMatch(tag string) *Holder {
	return &Holder{Store: h.Store.IfMatch(tag), shared: h.shared}
}

// Options configure a Holder: the store it opens and the engine it
// compiles.
type Options struct {
	// Workspace is the server's --workspace (also the base of a relative
	// /add-dir path).
	Workspace string
	// HomeDir expands ~; empty means the current user's home.
	HomeDir string
	// Logger gets the store's reload and watcher messages; nil means
	// slog.Default().
	Logger *slog.Logger
	// ResolvePath resolves symlinks; nil means fsview.ResolvePath, and then
	// a batch of calls resolves through one PathResolver.
	ResolvePath func(string) string
	// CheckedChannels are the channels the engine checks; nil = its default.
	CheckedChannels []string
}

// Open opens the config dir as store.Open does, compiling with the engine.
func Open(dir string, opts Options) (*Holder, error) {
	h, so := newHolder(opts)
	s, err := store.Open(dir, so)
	if err != nil {
		return nil, err
	}
	h.Store = s
	return h, nil
}

// OpenBackend opens b as store.OpenBackend does, compiling with the engine.
func OpenBackend(ctx context.Context, b store.Backend, opts Options) (*Holder, error) {
	h, so := newHolder(opts)
	s, err := store.OpenBackend(ctx, b, so)
	if err != nil {
		return nil, err
	}
	h.Store = s
	return h, nil
}

// newHolder derives the engine's options and the store's from opts: the
// store compiles through the holder and starts from engine/builtin's
// default rules.
// A nil ResolvePath means the real filesystem's view: then a batch of calls
// resolves through one resolver, and the bare-word and glob lookups agree
// with it (they are used only with it).
func newHolder(opts Options) (*Holder, store.Options) {
	if opts.HomeDir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			opts.HomeDir = home // as the store expands ~
		}
	}
	eo := engine.Options{Workspace: opts.Workspace, HomeDir: opts.HomeDir,
		ResolvePath: opts.ResolvePath, CheckedChannels: opts.CheckedChannels}
	if eo.ResolvePath == nil {
		eo = fsview.Lookups(eo)
	}
	h := &Holder{shared: &shared{opts: eo}}
	return h, store.Options{Workspace: opts.Workspace, HomeDir: opts.HomeDir, Logger: opts.Logger,
		PackageRules: builtin.Default, Compile: h.compile}
}

// compile is the store's Options.Compile: the one compile of a document.
func (h *Holder) compile(section *policy.Section, builtin *policy.Builtin) (any, []policy.Problem) {
	return engine.CompileSection(section, builtin, h.opts)
}

// Engine is the engine now in force, seen through the view SetEngineView
// gave (the live grants, docs/grants.md). It never blocks.
func (h *Holder) Engine() *engine.Engine {
	e := h.CompiledEngine()
	if v := h.view.Load(); v != nil {
		return (*v)(e)
	}
	return e
}

// CompiledEngine is the engine compiled from the policy in force, without
// the view SetEngineView gave: what the document alone decides.
func (h *Holder) CompiledEngine() *engine.Engine {
	e, _ := h.Store.Compiled().(*engine.Engine)
	return e
}

// SetEngineView makes Engine return view(the engine in force), so that
// every door deciding through the holder also consults what view adds (a
// grant.Book's Engine). view must be cheap: it runs on every decision.
func (h *Holder) SetEngineView(view func(*engine.Engine) *engine.Engine) { h.view.Store(&view) }

// EngineOptions are the options the policy in force is compiled with;
// previews and rule checks compile their drafts with the same, so that
// they decide as the server does.
func (h *Holder) EngineOptions() engine.Options { return h.opts }
