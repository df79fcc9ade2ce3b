package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gofrs/flock"

	"github.com/toolgate/toolgate/engine"
)

// withFileLock runs fn holding the lock file beside config.yaml, which every
// writer (toolgate processes and cooperating tools) takes before changing it.
func (s *Store) withFileLock(fn func() error) error {
	return lockDir(s.dir, fn)
}

func lockDir(dir string, fn func() error) error {
	lk := flock.New(filepath.Join(dir, lockFile))
	if err := lk.Lock(); err != nil {
		return fmt.Errorf("store: lock %s: %w", lk.Path(), err)
	}
	defer lk.Unlock()
	return fn()
}

// editFunc changes the parsed config.yaml; it returns an error (nothing is
// written) or nil.
type editFunc func(d *configDoc) error

// modify is the one write path: lock, re-read config.yaml, apply fn,
// validate, write atomically, then swap in the new engine. The policy in
// memory changes only when the file was written.
func (s *Store) modify(fn editFunc) (string, error) {
	s.mu.Lock()
	var next *state
	err := s.withFileLock(func() error {
		var err error
		next, err = s.modifyLocked(fn)
		return err
	})
	if err == nil {
		s.cur.Store(next)
	}
	s.mu.Unlock()
	if err != nil {
		return "", err
	}
	s.notify()
	return next.etag, nil
}

// modifyLocked does the work of modify with both locks held.
func (s *Store) modifyLocked(fn editFunc) (*state, error) {
	path := s.configPath()
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store: read %s: %w", path, err)
	}
	if len(bytes.TrimSpace(raw)) == 0 && s.cur.Load().section != nil {
		// An emptied file keeps the last good policy in force (load); an
		// edit now would write a policy made of that edit alone.
		return nil, fmt.Errorf("%w: config.yaml is empty; restore it before editing (the last good policy stays in force)", ErrBrokenConfig)
	}
	doc, err := parseConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBrokenConfig, err)
	}
	before, err := doc.decodedPermissions()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBrokenConfig, err)
	}
	if err := fn(doc); err != nil {
		return nil, err
	}
	out, err := doc.render()
	if err != nil {
		return nil, err
	}
	section, sectionProblems, err := decodeSection(out)
	if err != nil {
		return nil, fmt.Errorf("store: the edited config does not parse back: %w", err)
	}
	cur := s.cur.Load()
	oldSection, _ := before.(map[string]any)
	oldProblems := s.engineOf(raw, oldSection).Problems()
	eng, problems := engine.Compile(section, cur.builtin, s.EngineOptions())
	if added := introduced(oldProblems, problems); len(added) > 0 || len(sectionProblems) > 0 {
		return nil, &ValidationError{Problems: append(sectionProblems, added...)}
	}
	if err := writeAtomic(path, out, fileMode(path)); err != nil {
		return nil, err
	}
	st := &state{
		engine: eng, section: section, etag: sectionETag(section),
		builtin: cur.builtin, builtinSource: cur.builtinSource,
		cfgRaw: out, cfgOK: true, builtinRaw: cur.builtinRaw,
	}
	for _, p := range cur.problems {
		if p.Path == BuiltinFile {
			st.problems = append(st.problems, p)
		}
	}
	st.problems = append(st.problems, problems...)
	return st, nil
}

// engineOf returns the engine of the config text raw, whose permissions
// section is section: the engine in force when raw is the text it was
// compiled from (the common case, no hand edit since the last load), so a
// write does not compile the policy it starts from again.
func (s *Store) engineOf(raw []byte, section map[string]any) *engine.Engine {
	cur := s.cur.Load()
	if cur.cfgOK && len(bytes.TrimSpace(raw)) > 0 && bytes.Equal(raw, cur.cfgRaw) {
		return cur.engine
	}
	eng, _ := engine.Compile(section, cur.builtin, s.EngineOptions())
	return eng
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// introduced returns the problems of after that before did not have. Entry
// indexes are ignored in the comparison, since deleting a rule shifts the
// index of every broken rule after it.
func introduced(before, after []engine.Problem) []engine.Problem {
	seen := map[string]int{}
	for _, p := range before {
		seen[problemKey(p)]++
	}
	var out []engine.Problem
	for _, p := range after {
		k := problemKey(p)
		if seen[k] > 0 {
			seen[k]--
			continue
		}
		out = append(out, p)
	}
	return out
}

func problemKey(p engine.Problem) string {
	return indexRE.ReplaceAllString(p.Path, "[]") + "\x00" + indexRE.ReplaceAllString(p.Message, "[]")
}

// fileMode keeps the mode of an existing config.yaml; a new one is 0600.
func fileMode(path string) fs.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return 0o600
}

const tempPrefix = ".config.yaml."

// writeAtomic writes data to a temp file in the same dir, fsyncs it, renames
// it over path and fsyncs the dir, so that a crash leaves either the old or
// the new file, never a mix. Errors wrap the OS error.
func writeAtomic(path string, data []byte, mode fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPrefix+"*.tmp")
	if err != nil {
		return fmt.Errorf("store: write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("store: write %s: %w", tmp, err)
	}
	if err = f.Chmod(mode); err != nil {
		return fmt.Errorf("store: chmod %s: %w", tmp, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("store: fsync %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", tmp, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("store: rename %s: %w", tmp, err)
	}
	if err = syncDir(dir); err != nil {
		return err
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("store: open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("store: fsync dir %s: %w", dir, err)
	}
	return nil
}

// removeStaleTemps removes temp files a crashed writer left behind. It runs
// under the file lock, so no live writer owns them.
func removeStaleTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, tempPrefix) && strings.HasSuffix(n, ".tmp") {
			os.Remove(filepath.Join(dir, n))
		}
	}
}
