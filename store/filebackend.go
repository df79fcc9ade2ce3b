package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/toolgate/toolgate/store/atomicfile"
)

// FileBackend is the policy document in a config dir: config.yaml and
// builtin_rules.yaml. Writers (toolgate processes and cooperating tools)
// take the lock file beside config.yaml; writes are atomic (atomicfile).
type FileBackend struct {
	dir string
	log *slog.Logger
	wg  sync.WaitGroup // the Watch goroutines
}

var _ Backend = (*FileBackend)(nil)

// reloadDelay lets a burst of events (an editor's write, rename and chmod)
// settle into one reload.
const reloadDelay = 40 * time.Millisecond

// NewFileBackend opens the config dir, creating it and a default
// config.yaml when missing, and removes temp files a crashed write left.
// log nil means slog.Default().
func NewFileBackend(dir string, log *slog.Logger) (*FileBackend, error) {
	if log == nil {
		log = slog.Default()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store: config dir %q: %w", dir, err)
	}
	b := &FileBackend{dir: abs, log: log}
	if err := b.createDefaults(); err != nil {
		return nil, err
	}
	return b, nil
}

// Name is "config.yaml".
func (b *FileBackend) Name() string { return ConfigFile }

// Dir is the absolute config dir.
func (b *FileBackend) Dir() string { return b.dir }

// BuiltinSource is the path of the user's builtin_rules.yaml.
func (b *FileBackend) BuiltinSource() string { return b.builtinPath() }

// Close waits for the Watch goroutines, which end with their contexts.
func (b *FileBackend) Close() error {
	b.wg.Wait()
	return nil
}

func (b *FileBackend) configPath() string  { return filepath.Join(b.dir, ConfigFile) }
func (b *FileBackend) builtinPath() string { return filepath.Join(b.dir, BuiltinFile) }

// createDefaults creates the dir and a default config.yaml when missing.
func (b *FileBackend) createDefaults() error {
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return fmt.Errorf("store: create config dir: %w", err)
	}
	return lockDir(b.dir, func() error {
		atomicfile.RemoveStaleTemps(b.dir)
		if _, err := os.Stat(b.configPath()); err == nil {
			return nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("store: %w", err)
		}
		if err := writeAtomic(b.configPath(), []byte(DefaultConfig), 0o600); err != nil {
			return err
		}
		b.log.Info("wrote default config", "path", b.configPath())
		return nil
	})
}

// Read reads both files. It never fails: read errors are in the Document
// (a missing builtin_rules.yaml is no error, Builtin is nil then).
func (b *FileBackend) Read(context.Context) (Document, error) {
	return b.read(), nil
}

func (b *FileBackend) read() Document {
	var d Document
	d.Config, d.ConfigErr = os.ReadFile(b.configPath())
	d.Builtin, d.BuiltinErr = os.ReadFile(b.builtinPath())
	if errors.Is(d.BuiltinErr, fs.ErrNotExist) {
		d.Builtin, d.BuiltinErr = nil, nil
	}
	return d
}

// Update holds the lock file, re-reads both files (so a hand edit made
// since the last load is edited, not overwritten), and writes what edit
// returns atomically, keeping config.yaml's mode. A config.yaml that cannot
// be read for another reason than absence is an error before edit runs.
func (b *FileBackend) Update(_ context.Context, edit func(cur Document) ([]byte, error)) (Document, error) {
	var out Document
	err := lockDir(b.dir, func() error {
		cur := b.read()
		if cur.ConfigErr != nil && !errors.Is(cur.ConfigErr, fs.ErrNotExist) {
			return fmt.Errorf("store: read %s: %w", b.configPath(), cur.ConfigErr)
		}
		next, err := edit(cur)
		if err != nil {
			return err
		}
		path := b.configPath()
		if err := writeAtomic(path, next, fileMode(path)); err != nil {
			return err
		}
		out = Document{Config: next, Builtin: cur.Builtin, BuiltinErr: cur.BuiltinErr}
		return nil
	})
	return out, err
}

// Watch watches the config dir (not the files, so that editors that replace
// a file by rename are seen) and calls changed once a burst of events about
// either file has settled, until ctx ends.
func (b *FileBackend) Watch(ctx context.Context, changed func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("store: watch %s: %w", b.dir, err)
	}
	if err := w.Add(b.dir); err != nil {
		w.Close()
		return fmt.Errorf("store: watch %s: %w", b.dir, err)
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer w.Close()
		b.watch(ctx, w, changed)
	}()
	return nil
}

func (b *FileBackend) watch(ctx context.Context, w *fsnotify.Watcher, changed func()) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if name := filepath.Base(ev.Name); name == ConfigFile || name == BuiltinFile {
				timer.Reset(reloadDelay)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			b.log.Warn("config dir watcher", "dir", b.dir, "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				timer.Reset(reloadDelay)
			}
		case <-timer.C:
			changed()
		}
	}
}

// lockDir runs fn holding the lock file of the config dir.
func lockDir(dir string, fn func() error) error {
	if err := atomicfile.LockDir(dir, lockFile, fn); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// writeAtomic writes a file of the config dir atomically (atomicfile).
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := atomicfile.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// fileMode keeps the mode of an existing config.yaml; a new one is 0600.
func fileMode(path string) fs.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return 0o600
}

// SetBuiltin writes the user's built-in rule list text to
// builtin_rules.yaml atomically under the config dir lock (nil removes the
// file, so that the package's rules are in force); the watchers of every
// process on the dir reload. The caller validates the text first.
func (b *FileBackend) SetBuiltin(_ context.Context, text []byte) (Document, error) {
	var out Document
	err := lockDir(b.dir, func() error {
		path := b.builtinPath()
		if text == nil {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("store: remove %s: %w", path, err)
			}
		} else if err := writeAtomic(path, text, fileMode(path)); err != nil {
			return err
		}
		out = b.read()
		return nil
	})
	return out, err
}
