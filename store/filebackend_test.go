package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestFileBackendReadUpdate: a new config dir gets the default config;
// Read reports a missing builtin_rules.yaml as none and an unreadable one
// as an error in the document; a failing edit writes nothing; a good one
// is written with the file's mode kept.
func TestFileBackendReadUpdate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	b, err := NewFileBackend(dir, testOptions().Logger)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	doc, err := b.Read(ctx)
	if err != nil || doc.ConfigErr != nil || string(doc.Config) != DefaultConfig || doc.Builtin != nil || doc.BuiltinErr != nil {
		t.Fatalf("Read of a new dir = %q %v %q %v, %v; want the default config and no built-in rules", doc.Config, doc.ConfigErr, doc.Builtin, doc.BuiltinErr, err)
	}
	if err := os.Chmod(filepath.Join(dir, ConfigFile), 0o640); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := b.Update(ctx, func(Document) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("Update with a failing edit: %v, want boom", err)
	}
	if raw := readFile(t, filepath.Join(dir, ConfigFile)); string(raw) != DefaultConfig {
		t.Error("a failing edit changed config.yaml")
	}
	out, err := b.Update(ctx, func(cur Document) ([]byte, error) { return append(cur.Config, "# edited\n"...), nil })
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, ConfigFile)); string(got) != string(out.Config) || string(got) != DefaultConfig+"# edited\n" {
		t.Errorf("after Update config.yaml = %q, want the default plus the edit", got)
	}
	if fi, _ := os.Stat(filepath.Join(dir, ConfigFile)); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after Update = %o, want 640 kept", fi.Mode().Perm())
	}
	if err := os.Mkdir(filepath.Join(dir, BuiltinFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if doc, _ := b.Read(ctx); doc.BuiltinErr == nil || errors.Is(doc.BuiltinErr, fs.ErrNotExist) {
		t.Errorf("Read with builtin_rules.yaml a directory: BuiltinErr = %v, want a read error", doc.BuiltinErr)
	}
}

// TestFileBackendWatch: a write to config.yaml by another hand calls
// changed; after ctx ends Close returns (the watcher's goroutine is gone)
// and further writes call nothing.
func TestFileBackendWatch(t *testing.T) {
	dir := t.TempDir()
	b, err := NewFileBackend(dir, testOptions().Logger)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.Watch(ctx, func() { calls.Add(1) }); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ConfigFile), []byte("permissions: {}\n"))
	writeFile(t, filepath.Join(dir, "unrelated.txt"), []byte("x"))
	deadline := time.Now().Add(3 * time.Second)
	for calls.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no change reported for a write of config.yaml")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	done := make(chan struct{})
	go func() { b.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("Close did not return after the watch's context ended")
	}
	before := calls.Load()
	writeFile(t, filepath.Join(dir, ConfigFile), []byte("permissions: {enabled: true}\n"))
	time.Sleep(5 * reloadDelay)
	if got := calls.Load(); got != before {
		t.Errorf("changed called %d more times after the watch ended", got-before)
	}
}
