package grant

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/txn"
)

// DefaultReload is how often a Book reloads its grants from the store
// even without a notice, so that a missed notice (a dropped connection)
// costs at most this long for a revocation made on another replica.
const DefaultReload = 5 * time.Second

// Options configure a Book.
type Options struct {
	// Now is the clock every expiry is checked against; time.Now when nil.
	Now func() time.Time
	// Reload is the periodic reload; DefaultReload when zero.
	Reload time.Duration
	// Logger gets reload failures; slog.Default when nil.
	Logger *slog.Logger
}

// Book is one replica's live grants and the engine that consults them. It
// is safe for concurrent use.
type Book struct {
	store Store
	now   func() time.Time
	every time.Duration
	log   *slog.Logger

	mu      sync.Mutex // serializes reloads, so an older list never wins
	grants  atomic.Pointer[[]Grant]
	version atomic.Uint64
	derived atomic.Pointer[derivedEngine]
}

// derivedEngine is a policy engine with the grants of one version.
type derivedEngine struct {
	base    *engine.Engine
	version uint64
	eng     *engine.Engine
}

// NewBook returns a Book over st; call Start to load it.
func NewBook(st Store, opts Options) *Book {
	b := &Book{store: st, now: opts.Now, every: opts.Reload, log: opts.Logger}
	if b.now == nil {
		b.now = time.Now
	}
	if b.every <= 0 {
		b.every = DefaultReload
	}
	if b.log == nil {
		b.log = slog.Default()
	}
	empty := []Grant{}
	b.grants.Store(&empty)
	return b
}

// Start loads the grants, then keeps them in step with the store (its
// notices and the periodic reload) until ctx ends. A first load that fails
// is returned: the server then starts with none (a grant only loosens).
func (b *Book) Start(ctx context.Context) error {
	err := b.Reload(ctx)
	go func() {
		err := b.store.WatchGrants(ctx, func() {
			if err := b.Reload(ctx); err != nil && ctx.Err() == nil {
				b.log.Warn("grant: reload after a notice failed", "err", err)
			}
		})
		if err != nil && !errors.Is(err, context.Canceled) {
			b.log.Warn("grant: change notices stopped", "err", err)
		}
	}()
	go b.reloadLoop(ctx)
	return err
}

func (b *Book) reloadLoop(ctx context.Context) {
	t := time.NewTicker(b.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := b.Reload(ctx); err != nil && ctx.Err() == nil {
				b.log.Warn("grant: periodic reload failed", "err", err)
			}
		}
	}
}

// Reload reads the live grants from the store. When the store cannot be
// read the grants in force stay (they keep expiring on time).
func (b *Book) Reload(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	list, err := b.store.LiveGrants(ctx, b.now())
	if err != nil {
		return fmt.Errorf("grant: load: %w", err)
	}
	if list == nil {
		list = []Grant{}
	}
	b.grants.Store(&list)
	b.version.Add(1)
	return nil
}

// Add stores a new grant (an id and created_at are given when empty) and
// makes it live on this replica before returning.
func (b *Book) Add(ctx context.Context, g Grant) (Grant, error) {
	if g.ID == "" {
		g.ID = "g_" + rand.Text()[:16]
	}
	if g.CreatedAt.IsZero() {
		g.CreatedAt = b.now().UTC().Truncate(time.Millisecond)
	}
	if err := g.Check(); err != nil {
		return Grant{}, err
	}
	if err := b.store.AddGrant(ctx, g); err != nil {
		return Grant{}, fmt.Errorf("grant: store: %w", err)
	}
	if enc := txn.Of(ctx); enc != nil && enc.Joined() {
		// Stored inside the caller's transaction: the grant is live only
		// once that commits, and never if it does not.
		enc.AfterCommit(func() {
			if err := b.Reload(context.Background()); err != nil {
				b.log.Warn("grant: reload after a grant committed with its answer; the next reload brings it", "err", err)
			}
		})
		return g, nil
	}
	return g, b.Reload(ctx)
}

// Revoke removes a grant on every replica and returns it; ErrNotFound when
// no live grant has that id.
func (b *Book) Revoke(ctx context.Context, id string) (Grant, error) {
	g, err := b.store.RevokeGrant(ctx, id)
	if err != nil {
		return Grant{}, err
	}
	return g, b.Reload(ctx)
}

// List returns the grants live now, oldest first.
func (b *Book) List() []Grant {
	now := b.now()
	all := *b.grants.Load()
	out := make([]Grant, 0, len(all))
	for _, g := range all {
		if g.LiveAt(now) {
			out = append(out, g)
		}
	}
	return out
}

// Engine returns base consulting this replica's grants: base itself when
// there are none. The result is cached until base or the grants change,
// so the hot path pays two atomic loads and a comparison.
func (b *Book) Engine(base *engine.Engine) *engine.Engine {
	v := b.version.Load()
	if d := b.derived.Load(); d != nil && d.base == base && d.version == v {
		return d.eng
	}
	grants := *b.grants.Load()
	eng := base
	if len(grants) > 0 {
		list := make([]engine.Grant, len(grants))
		for i, g := range grants {
			list[i] = g.engineGrant()
		}
		var problems []policy.Problem
		eng, problems = base.WithGrants(list, b.now)
		for _, p := range problems {
			b.log.Warn("grant: a grant takes no part", "path", p.Path, "problem", p.Message)
		}
	}
	b.derived.Store(&derivedEngine{base: base, version: v, eng: eng})
	return eng
}
