package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"

	"github.com/toolgate/toolgate/store/atomicfile"

	"github.com/toolgate/toolgate/engine"
)

// withFileLock runs fn holding the lock file beside config.yaml, which every
// writer (toolgate processes and cooperating tools) takes before changing it.
func (s *Store) withFileLock(fn func() error) error {
	return lockDir(s.dir, fn)
}

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

func removeStaleTemps(dir string) { atomicfile.RemoveStaleTemps(dir) }

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
