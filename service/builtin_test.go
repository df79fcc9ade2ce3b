package service_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
)

// TestSetBuiltinFileMode: the list is written to builtin_rules.yaml, the
// writing store decides with it at once and a second store on the same
// config dir (another process) within a second, through its watcher; a bad
// list leaves the file as it was.
func TestSetBuiltinFileMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, store.BuiltinFile)
	if err := os.WriteFile(path, []byte("rules: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := func() *inforce.Holder {
		st, err := inforce.Open(dir, inforce.Options{Workspace: "/work/ws", HomeDir: "/home/u",
			ResolvePath: func(p string) string { return p }, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	a, b := open(), open()
	fb, ok := a.Backend().(service.BuiltinWriter)
	if !ok {
		t.Fatalf("the file backend %T is no BuiltinWriter", a.Backend())
	}
	svc := service.NewPolicy(a)
	ctx := context.Background()
	push := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "git push origin main"})}

	if got := b.Engine().Evaluate(push).Level; got == policy.Deny {
		t.Fatalf("before: level %s, want not deny", got)
	}
	var ve *store.ValidationError
	if err := svc.SetBuiltin(ctx, fb, []byte("rules:\n  - {id: x, tools: [], pattern: p, action: deny}\n")); !errors.As(err, &ve) {
		t.Fatalf("bad list: err %v, want a validation error", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "rules: []\n" {
		t.Fatalf("after the bad list: file %q, want it unchanged", got)
	}

	good := "rules:\n  - {id: no_push, tools: [bash], pattern: 're:^git push', action: deny}\n"
	if err := svc.SetBuiltin(ctx, fb, []byte(good)); err != nil {
		t.Fatalf("SetBuiltin: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != good {
		t.Errorf("file %q, want %q", got, good)
	}
	waitDeny(t, a, b, push, "other store")
}

// waitDeny checks that the writing store a denies req at once and the
// other store b (called other in the failure) within a second, and returns
// how long b took.
func waitDeny(t *testing.T, a, b *inforce.Holder, req *engine.Request, other string) time.Duration {
	t.Helper()
	if got := a.Engine().Evaluate(req).Level; got != policy.Deny {
		t.Errorf("writer: level %s, want deny at once", got)
	}
	start := time.Now()
	for b.Engine().Evaluate(req).Level != policy.Deny {
		if time.Since(start) > time.Second {
			t.Fatalf("the %s still decides %s after 1 s, want deny", other, b.Engine().Evaluate(req).Level)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}
