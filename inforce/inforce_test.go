package inforce

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
)

// openCounting opens a holder over dir whose compiles are counted.
func openCounting(t *testing.T, dir string) (*Holder, *atomic.Int64) {
	t.Helper()
	h, opts := newHolder(Options{Workspace: "/work/ws", HomeDir: "/home/u", ResolvePath: func(p string) string { return p },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var n atomic.Int64
	compile := opts.Compile
	opts.Compile = func(section *policy.Section, builtin *policy.Builtin) (any, []policy.Problem) {
		n.Add(1)
		return compile(section, builtin)
	}
	s, err := store.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.Store = s
	t.Cleanup(func() { s.Close() })
	return h, &n
}

// writeConfig replaces config.yaml by a rename, as editors save, so that
// the watcher never reads half a file.
func writeConfig(t *testing.T, dir, text string) {
	t.Helper()
	tmp := filepath.Join(dir, "config.yaml.tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, store.ConfigFile)); err != nil {
		t.Fatal(err)
	}
}

var bashLs = &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "ls"})}

// TestOneCompilePerChange: opening, a write and a reload of an outside
// edit each compile the policy once, and once a write returns the engine
// in force already decides with it.
func TestOneCompilePerChange(t *testing.T) {
	dir := t.TempDir()
	writeConfig(t, dir, "permissions:\n  schema: tiered_policy\n  tools: {bash: allow}\n")
	h, n := openCounting(t, dir)
	if got := n.Load(); got != 1 {
		t.Errorf("open compiled %d times, want 1", got)
	}
	if got := h.Engine().Evaluate(bashLs).Level; got != policy.Allow {
		t.Fatalf("before the write: %s, want allow", got)
	}
	n.Store(0)
	if _, err := h.SetToolLevel("bash", "deny"); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 1 {
		t.Errorf("a write compiled %d times, want 1", got)
	}
	if got := h.Engine().Evaluate(bashLs).Level; got != policy.Deny {
		t.Errorf("right after the write: %s, want deny", got)
	}
	n.Store(0)
	writeConfig(t, dir, "permissions:\n  schema: tiered_policy\n  tools: {bash: ask}\n")
	if err := h.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := h.Engine().Evaluate(bashLs).Level; got != policy.Ask {
		t.Errorf("after the outside edit: %s, want ask", got)
	}
	// The watcher may have reloaded the same edit first; each text is
	// compiled once all the same.
	if got := n.Load(); got != 1 {
		t.Errorf("an outside edit compiled %d times, want 1", got)
	}
	n.Store(0)
	writeConfig(t, dir, "permissions: [unclosed\n")
	if err := h.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := h.Engine().Evaluate(bashLs).Level; got != policy.Ask {
		t.Errorf("with config.yaml set aside: %s, want ask (the last good policy)", got)
	}
	if got := n.Load(); got != 0 {
		t.Errorf("a config.yaml set aside compiled %d times, want 0 (nothing the compile reads changed)", got)
	}
}

// TestRefusedWriteKeepsTheEngine: a write that adds a validation problem is
// refused with it, and the engine in force stays the one it was.
func TestRefusedWriteKeepsTheEngine(t *testing.T) {
	dir := t.TempDir()
	writeConfig(t, dir, "permissions:\n  schema: tiered_policy\n  tools: {bash: allow}\n")
	h, _ := openCounting(t, dir)
	before := h.CompiledEngine()
	_, err := h.SetToolLevel("bash", "sometimes")
	var ve *store.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) == 0 {
		t.Fatalf("SetToolLevel(bash, sometimes): %v, want a ValidationError with problems", err)
	}
	if h.CompiledEngine() != before {
		t.Error("a refused write changed the engine in force")
	}
	if got := h.Engine().Evaluate(bashLs).Level; got != policy.Allow {
		t.Errorf("after the refused write: %s, want allow", got)
	}
}

// TestEngineDoesNotAllocate: reading the engine in force, through a view,
// allocates nothing.
func TestEngineDoesNotAllocate(t *testing.T) {
	h, _ := openCounting(t, t.TempDir())
	h.SetEngineView(func(e *engine.Engine) *engine.Engine { return e })
	if n := testing.AllocsPerRun(1000, func() { _ = h.Engine() }); n != 0 {
		t.Errorf("Engine allocates %v times a call, want 0", n)
	}
}

// TestIfMatchSharesTheView: an IfMatch view of the holder decides through
// the view SetEngineView gave the holder, even when given afterwards.
func TestIfMatchSharesTheView(t *testing.T) {
	h, _ := openCounting(t, t.TempDir())
	im := h.IfMatch(h.ETag())
	var seen atomic.Bool
	h.SetEngineView(func(e *engine.Engine) *engine.Engine { seen.Store(true); return e })
	_ = im.Engine()
	if !seen.Load() {
		t.Error("the IfMatch view does not go through the holder's view")
	}
}
