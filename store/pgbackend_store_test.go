package store_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

// This file (helper C) checks store.Store over the Policy backend: the
// parse/compile/edit layer of the policy document, on a real database.

// openStore imports the default config into the database when it is empty
// and opens a store.Store over a Policy backend of db, as a replica does.
func openStore(t *testing.T, db *pg.DB) *inforce.Holder {
	t.Helper()
	ctx := context.Background()
	p := openPolicy(t, db)
	if _, err := p.Import(ctx, t.TempDir()); err != nil {
		t.Fatalf("Import: %v", err)
	}
	s, err := inforce.OpenBackend(ctx, p, inforce.Options{Workspace: "/work/ws", HomeDir: "/home/u",
		ResolvePath: func(p string) string { return p }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("OpenBackend: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var gitPush = &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "git push origin main"})}

// TestStoreEditSeenByOtherReplica: an edit through one Store decides in a
// second Store on the same database (its own pool and listener) within a
// second, with the same ETag, and the stored text keeps its comments.
func TestStoreEditSeenByOtherReplica(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	a, b := openStore(t, dbtest.Open(t, dsn)), openStore(t, dbtest.Open(t, dsn))
	if got := b.Engine().Evaluate(gitPush).Level; got != policy.Ask {
		t.Fatalf("before the edit: level = %s, want ask (default policy)", got)
	}
	etag, err := a.CreateRule(ruleOf(map[string]any{"id": "no_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "deny"}))
	if err != nil {
		t.Fatalf("CreateRule: %v", err)
	}
	if got := a.Engine().Evaluate(gitPush).Level; got != policy.Deny {
		t.Errorf("writer: level = %s, want deny at once", got)
	}
	start := time.Now()
	pgtest.WaitFor(t, time.Second, "the other replica decides with the edit", func() bool {
		return b.Engine().Evaluate(gitPush).Level == policy.Deny
	})
	t.Logf("edit seen by the other replica after %v", time.Since(start))
	if _, got, _ := b.Section(); got != etag {
		t.Errorf("other replica's ETag = %s, want %s", got, etag)
	}
	doc, err := a.Backend().Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc.Config), "# Master switch.") {
		t.Errorf("the stored section lost the default config's comments:\n%s", doc.Config)
	}
}

// TestStoreEditsFromBothReplicas: edits through two Stores interleave;
// neither loses the other's (each re-reads the row under its lock).
func TestStoreEditsFromBothReplicas(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	a, b := openStore(t, dbtest.Open(t, dsn)), openStore(t, dbtest.Open(t, dsn))
	for i, s := range []*inforce.Holder{a, b, a, b} {
		id := "r" + string(rune('0'+i))
		if _, err := s.CreateRule(ruleOf(map[string]any{"id": id, "tools": []any{"bash"}, "pattern": id, "action": "deny"})); err != nil {
			t.Fatalf("CreateRule %s: %v", id, err)
		}
	}
	for _, s := range []*inforce.Holder{a, b} {
		pgtest.WaitFor(t, time.Second, "all four rules on both", func() bool {
			sec, _, _ := s.Section()
			rules, _ := sec["rules"].([]any)
			return len(rules) == 4
		})
	}
}

// TestStoreDatabaseGone: with the server stopped the Store keeps deciding
// with the policy in force, an edit fails with ErrUnavailable and changes
// nothing, and Health/Problems say so; once the server is back, the next
// reload clears it and edits work again.
func TestStoreDatabaseGone(t *testing.T) {
	c := pgtest.Start(t)
	db, err := pg.Open(context.Background(), c.NewDatabase(t), pg.Options{OpTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	s := openStore(t, db)
	if _, err := s.CreateRule(ruleOf(map[string]any{"id": "no_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "deny"})); err != nil {
		t.Fatal(err)
	}
	_, etag, _ := s.Section()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateRule(ruleOf(map[string]any{"id": "other", "tools": []any{"bash"}, "pattern": "ls", "action": "deny"}))
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("edit with the server stopped: err = %v, want pg.ErrUnavailable", err)
	}
	if _, got, _ := s.Section(); got != etag {
		t.Errorf("a failed edit changed the section: ETag %s, want %s", got, etag)
	}
	if got := s.Engine().Evaluate(gitPush).Level; got != policy.Deny {
		t.Errorf("with the server stopped: level = %s, want deny (the policy in force)", got)
	}
	if err := s.Health(); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Health = %v, want pg.ErrUnavailable", err)
	}
	if err := s.Reload(); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Reload = %v, want pg.ErrUnavailable", err)
	}
	if !hasProblem(s.Problems(), "postgres") {
		t.Errorf("Problems = %v, want one about postgres", s.Problems())
	}
	// /readyz shows the problems to anyone: the cause, which names the
	// database's user and address, stays in the log.
	for _, p := range s.Problems() {
		if p.Message != store.MsgBackendUnreachable && p.Path == "postgres" {
			t.Errorf("the unreachable backend's problem says %q, want %q", p.Message, store.MsgBackendUnreachable)
		}
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// The listener's resync after it reconnects reloads the store.
	pgtest.WaitFor(t, 20*time.Second, "healthy again", func() bool { return s.Health() == nil })
	if hasProblem(s.Problems(), "postgres") {
		t.Errorf("Problems after recovery = %v, want none about postgres", s.Problems())
	}
	if _, err := s.CreateRule(ruleOf(map[string]any{"id": "other", "tools": []any{"bash"}, "pattern": "ls", "action": "deny"})); err != nil {
		t.Errorf("edit after the server is back: %v", err)
	}
}

func hasProblem(ps []policy.Problem, path string) bool {
	for _, p := range ps {
		if p.Path == path {
			return true
		}
	}
	return false
}
