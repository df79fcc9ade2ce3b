package service_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/pg"
)

// openPGReplica opens a store over the policy in the database at dsn, with
// its own pool and listener, as a replica does.
func openPGReplica(t *testing.T, dsn string) (*inforce.Holder, *store.PGBackend) {
	t.Helper()
	ctx := context.Background()
	db, err := pg.Open(ctx, dsn, pg.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	pol, err := store.OpenPGBackend(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pol.Import(ctx, t.TempDir()); err != nil {
		t.Fatalf("Import: %v", err)
	}
	st, err := inforce.OpenBackend(ctx, pol, inforce.Options{Workspace: "/work/ws", HomeDir: "/home/u",
		ResolvePath: func(p string) string { return p }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st, pol
}

// TestSetBuiltinPostgresOtherReplica: a built-in list set through one
// replica's service decides on a second replica of the same database within
// a second; a bad list is refused and changes neither.
func TestSetBuiltinPostgresOtherReplica(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	a, polA := openPGReplica(t, dsn)
	b, _ := openPGReplica(t, dsn)
	push := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "git push origin main"})}
	if got := b.Engine().Evaluate(push).Level; got == policy.Deny {
		t.Fatalf("before: level %s, want not deny", got)
	}
	svc := service.NewPolicy(a)
	ctx := context.Background()

	bad := []byte("rules:\n  - {id: x, tools: [bash], pattern: 're:(', action: deny}\n")
	var ve *store.ValidationError
	if err := svc.SetBuiltin(ctx, polA, bad); !errors.As(err, &ve) || ve.Problems[0].Path != "builtin_rules[0].pattern" {
		t.Fatalf("bad list: err %v, want a validation error on builtin_rules[0].pattern", err)
	}
	if doc, err := polA.Read(ctx); err != nil || doc.Builtin != nil {
		t.Fatalf("after the bad list: stored %q, %v; want none", doc.Builtin, err)
	}

	good := []byte("rules:\n  - id: no_push\n    tools: [bash]\n    pattern: 're:^git push'\n    action: deny\n")
	if err := svc.SetBuiltin(ctx, polA, good); err != nil {
		t.Fatalf("SetBuiltin: %v", err)
	}
	took := waitDeny(t, a, b, push, "other replica")
	t.Logf("other replica decides with the new list after %v", took)
}
