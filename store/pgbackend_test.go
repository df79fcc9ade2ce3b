package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

func openPolicy(t *testing.T, db *pg.DB) *store.PGBackend {
	t.Helper()
	p, err := store.OpenPGBackend(context.Background(), db)
	if err != nil {
		t.Fatalf("store.OpenPGBackend: %v", err)
	}
	return p
}

// TestPolicyEmptyDatabase: before anything is written, Read reports a
// missing document the way a missing config.yaml is reported.
func TestPolicyEmptyDatabase(t *testing.T) {
	p := openPolicy(t, dbtest.Open(t, pgtest.NewDSN(t)))
	doc, err := p.Read(context.Background())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if doc.Config != nil || !errors.Is(doc.ConfigErr, store.ErrNoDocument) || doc.Builtin != nil || doc.Version != "0" {
		t.Errorf("got %+v, want no config (store.ErrNoDocument), no builtin, version 0", doc)
	}
}

// TestPolicyUpdateNoLostUpdate: writers on two pools (two replicas) each
// append a rule to what they read; every append survives and the version
// counts every write.
func TestPolicyUpdateNoLostUpdate(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	a, b := openPolicy(t, dbtest.Open(t, dsn)), openPolicy(t, dbtest.Open(t, dsn))
	const perWriter, writers = 10, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter)
	for w := range writers {
		p := a
		if w%2 == 1 {
			p = b
		}
		wg.Go(func() {
			for i := range perWriter {
				_, err := p.Update(context.Background(), func(cur store.Document) ([]byte, error) {
					text := string(cur.Config)
					if cur.Config == nil {
						text = "permissions:\n  rules:\n"
					}
					return fmt.Appendf(nil, "%s    - {id: w%d-%d, tool: bash, pattern: 'x', action: deny}\n", text, w, i), nil
				})
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Update: %v", err)
	}
	doc, err := a.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := doc.Version, fmt.Sprint(writers*perWriter); got != want {
		t.Errorf("version = %s, want %s", got, want)
	}
	for w := range writers {
		for i := range perWriter {
			if id := fmt.Sprintf("id: w%d-%d,", w, i); !strings.Contains(string(doc.Config), id) {
				t.Errorf("lost update: %q missing", id)
			}
		}
	}
}

// TestPolicyUpdateRefusals: an edit's error comes back as is, and text that
// is not a permissions-only document is refused; neither writes.
func TestPolicyUpdateRefusals(t *testing.T) {
	p := openPolicy(t, dbtest.Open(t, pgtest.NewDSN(t)))
	ctx := context.Background()
	mine := errors.New("edit says no")
	for _, tc := range []struct {
		note string
		edit func(store.Document) ([]byte, error)
		want error
	}{
		{"edit error", func(store.Document) ([]byte, error) { return nil, mine }, mine},
		{"other top-level key", func(store.Document) ([]byte, error) { return []byte("permissions: {}\nmodel: x\n"), nil }, store.ErrNotSection},
		{"not a mapping", func(store.Document) ([]byte, error) { return []byte("- a\n"), nil }, store.ErrNotSection},
		{"not yaml", func(store.Document) ([]byte, error) { return []byte("permissions: [\n"), nil }, store.ErrNotSection},
	} {
		if _, err := p.Update(ctx, tc.edit); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.note, err, tc.want)
		}
	}
	doc, err := p.Read(ctx)
	if err != nil || doc.Version != "0" || doc.Config != nil {
		t.Errorf("after refusals: %+v, %v; want version 0 and no config", doc, err)
	}
	text := "# kept\npermissions:\n  tools: {bash: ask} # also kept\n"
	got, err := p.Update(ctx, func(store.Document) ([]byte, error) { return []byte(text), nil })
	if err != nil || string(got.Config) != text || got.Version != "1" {
		t.Fatalf("Update = %+v, %v; want the text at version 1", got, err)
	}
	if doc, _ := p.Read(ctx); string(doc.Config) != text || doc.Version != "1" {
		t.Errorf("Read after Update = %q v%s, want %q v1", doc.Config, doc.Version, text)
	}
}

// TestPolicyWatchSeesOtherReplica: an edit through one pool reaches the
// Watch of another within a second.
func TestPolicyWatchSeesOtherReplica(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	a, b := openPolicy(t, dbtest.Open(t, dsn)), openPolicy(t, dbtest.Open(t, dsn))
	var calls atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := a.Watch(ctx, func() { calls.Add(1) }); err != nil {
		t.Fatal(err)
	}
	// The first call is the resync after LISTEN is established.
	pgtest.WaitFor(t, 5*time.Second, "first resync", func() bool { return calls.Load() >= 1 })
	before := calls.Load()
	start := time.Now()
	if _, err := b.Update(ctx, func(store.Document) ([]byte, error) { return []byte("permissions: {}\n"), nil }); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, time.Second, "watch after another pool's edit", func() bool { return calls.Load() > before })
	t.Logf("edit to watch: %v", time.Since(start))
	cancel()
	time.Sleep(50 * time.Millisecond)
	after := calls.Load()
	if _, err := b.Update(context.Background(), func(store.Document) ([]byte, error) { return []byte("permissions: {}\n"), nil }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if got := calls.Load(); got != after {
		t.Errorf("changed called %d times after ctx ended, want 0", got-after)
	}
}

// TestPolicySlowEdit: an edit that takes longer than the per-statement
// timeout (a large policy compiling) still commits.
func TestPolicySlowEdit(t *testing.T) {
	db, err := pg.Open(context.Background(), pgtest.NewDSN(t), pg.Options{OpTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := openPolicy(t, db)
	doc, err := p.Update(context.Background(), func(store.Document) ([]byte, error) {
		time.Sleep(700 * time.Millisecond)
		return []byte("permissions: {}\n"), nil
	})
	if err != nil || doc.Version != "1" {
		t.Errorf("slow edit: %+v, %v; want version 1", doc, err)
	}
}
