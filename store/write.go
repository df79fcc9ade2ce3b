package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/txn"
)

// editFunc changes the parsed config.yaml; it returns an error (nothing is
// written) or nil.
type editFunc func(d *configDoc) error

// modify is the one write path: under the backend's lock, re-read the
// document, apply fn, validate (compiling it once), store it atomically,
// then swap in the new snapshot with what was compiled. The policy in
// memory changes only when the document was stored.
func (s *Store) modify(fn editFunc) (string, error) {
	return s.modifyIn(context.Background(), fn)
}

// modifyIn is modify with ctx, which may carry a txn.Enclosing transaction:
// when the backend wrote inside it, the new snapshot goes in force only
// once that transaction committed (installCommitted), never before.
func (s *Store) modifyIn(ctx context.Context, fn editFunc) (string, error) {
	s.mu.Lock()
	mem := s.cur.Load()
	var next *state
	_, err := s.backend.Update(ctx, func(cur Document) ([]byte, error) {
		var out []byte
		var err error
		next, out, err = s.edit(cur, fn)
		return out, err
	})
	s.noteBackend(err)
	if enc := txn.Of(ctx); err == nil && enc != nil && enc.Joined() {
		s.mu.Unlock()
		enc.AfterCommit(func() { s.installCommitted(mem, next) })
		return next.etag, nil
	}
	if err == nil {
		s.install(next)
	}
	s.mu.Unlock()
	if err != nil {
		return "", err
	}
	s.notify()
	return next.etag, nil
}

// install puts next in force. Callers hold s.mu.
func (s *Store) install(next *state) {
	s.cur.Store(next)
	if s.lastSetAside.Swap(next.setAside) && !next.setAside {
		s.log.Info("config.yaml reads again; its policy is in force", "backend", s.backend.Name(), "dir", s.Dir())
	}
}

// installCommitted puts next, written inside a txn.Enclosing transaction that
// has now committed, in force, if the policy in force is still mem, the
// one next was edited from. When something else went in force meanwhile (a
// reload, another write that waited for the row lock), next may be older
// than it, so the document is read again instead.
func (s *Store) installCommitted(mem, next *state) {
	s.mu.Lock()
	if s.cur.Load() != mem {
		s.mu.Unlock()
		if err := s.Reload(); err != nil {
			s.log.Warn("reload after a joined write; the watcher retries", "backend", s.backend.Name(), "err", err)
			s.changed()
		}
		return
	}
	s.install(next)
	s.mu.Unlock()
	s.notify()
}

// edit applies fn to the document cur, read under the backend's lock, and
// returns the state of the result and its text, or why nothing may be
// stored.
func (s *Store) edit(cur Document, fn editFunc) (*state, []byte, error) {
	raw := cur.Config
	if cur.ConfigErr != nil && !errors.Is(cur.ConfigErr, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("store: read %s: %w", s.backend.Name(), cur.ConfigErr)
	}
	mem := s.cur.Load()
	if len(bytes.TrimSpace(raw)) == 0 && mem.section != nil {
		// An emptied file keeps the last good policy in force (load); an
		// edit now would write a policy made of that edit alone.
		return nil, nil, Refuse(ErrBrokenConfig, "config.yaml does not parse: config.yaml is empty; restore it before editing (the last good policy stays in force)")
	}
	doc, err := parseConfig(raw)
	if err != nil {
		return nil, nil, Refuse(ErrBrokenConfig, "config.yaml does not parse: %v", err)
	}
	before, err := doc.decodedPermissions()
	if err != nil {
		return nil, nil, Refuse(ErrBrokenConfig, "config.yaml does not parse: %v", err)
	}
	oldSection, _ := before.(map[string]any)
	if s.ifMatch != "" && sectionETag(oldSection) != s.ifMatch {
		return nil, nil, ErrPreconditionFailed
	}
	if err := fn(doc); err != nil {
		return nil, nil, err
	}
	out, err := doc.render()
	if err != nil {
		return nil, nil, err
	}
	section, sectionProblems, err := decodeSection(out)
	if err != nil {
		return nil, nil, fmt.Errorf("store: the edited config does not parse back: %w", err)
	}
	oldProblems := s.problemsOf(raw, oldSection)
	compiled, problems := s.compile(section, mem.builtin)
	if added := introduced(oldProblems, problems); len(added) > 0 || len(sectionProblems) > 0 {
		return nil, nil, &ValidationError{Problems: append(sectionProblems, added...)}
	}
	st := &state{
		compiled: compiled, compiledProblems: problems, section: section, etag: sectionETag(section),
		builtin: mem.builtin, builtinSource: mem.builtinSource,
		cfgRaw: out, cfgOK: true, builtinRaw: mem.builtinRaw,
	}
	for _, p := range mem.problems {
		if p.Path == BuiltinFile {
			st.problems = append(st.problems, p)
		}
	}
	st.problems = append(st.problems, problems...)
	return st, out, nil
}

// problemsOf returns the compile problems of the config text raw, whose
// permissions section is section: those of the policy in force when raw
// is the text it was compiled from (the common case, no hand edit since
// the last load), so a write does not compile the policy it starts from
// again.
func (s *Store) problemsOf(raw []byte, section map[string]any) []policy.Problem {
	cur := s.cur.Load()
	if cur.cfgOK && len(bytes.TrimSpace(raw)) > 0 && bytes.Equal(raw, cur.cfgRaw) {
		return cur.compiledProblems
	}
	_, problems := s.compile(section, cur.builtin)
	return problems
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// introduced returns the problems of after that before did not have. Entry
// indexes are ignored in the comparison, since deleting a rule shifts the
// index of every broken rule after it.
func introduced(before, after []policy.Problem) []policy.Problem {
	seen := map[string]int{}
	for _, p := range before {
		seen[problemKey(p)]++
	}
	var out []policy.Problem
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

func problemKey(p policy.Problem) string {
	return indexRE.ReplaceAllString(p.Path, "[]") + "\x00" + indexRE.ReplaceAllString(p.Message, "[]")
}
