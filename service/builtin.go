package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
)

// BuiltinWriter stores the user's built-in rule list text (what
// builtin_rules.yaml holds) and makes every replica load it: the file
// backend writes builtin_rules.yaml atomically under the config dir lock
// (the watchers reload), the PostgreSQL policy updates its row and notifies.
// store.FileBackend and store.PGBackend are ones.
type BuiltinWriter interface {
	SetBuiltin(ctx context.Context, text []byte) (store.Document, error)
}

// reloader is a document store that can load the stored document at once;
// *inforce.Holder is one.
type reloader interface {
	Reload() error
}

// SetBuiltin replaces the built-in rule list with text (YAML or JSON, the
// shape of builtin_rules.yaml: a mapping with a `rules` list). The list is
// checked first as the store checks the file (it must parse, and its rules
// must compile without problems in the section's mode); a list with
// problems is refused with a *store.ValidationError naming each field, and
// nothing is written. Then w stores it and this process reloads at once, so
// that the next decision here uses the new list.
func (p *Policy) SetBuiltin(ctx context.Context, w BuiltinWriter, text []byte) error {
	if w == nil {
		return fmt.Errorf("service: the built-in rules cannot be written here: %w", store.ErrUnavailable)
	}
	if err := p.checkBuiltin(text); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := w.SetBuiltin(ctx, text); err != nil {
		return err
	}
	// The list is stored: a reload that fails here (a database blip) is
	// not the write's failure; the watcher or NOTIFY loads it, and the
	// store's Health says why meanwhile.
	if r, ok := p.docs.(reloader); ok {
		_ = r.Reload()
	}
	return nil
}

// checkBuiltin decodes text as the store decodes builtin_rules.yaml and
// compiles it in the section's mode; any problem of the list refuses it.
func (p *Policy) checkBuiltin(text []byte) error {
	rules, err := decodeBuiltinText(text)
	if err != nil {
		return &store.ValidationError{Problems: []policy.Problem{{Path: policy.PathBuiltin, Message: err.Error()}}}
	}
	// The built-in set compiles on its own (engine's compileRuleSets): only
	// the section's mode and schema reach it, so the user's rules (maybe
	// 100k) are neither copied nor compiled for this check.
	cur, _, err := p.Typed()
	if err != nil {
		return err
	}
	sec := policy.Section{Enabled: true, Tiered: cur.Tiered, Mode: cur.Mode, External: policy.ExternalDirs{Star: policy.Ask}}
	b := policy.DecodeBuiltin(rules)
	_, problems := engine.CompileSection(&sec, &b, p.docs.EngineOptions())
	var own []policy.Problem
	for _, pr := range problems {
		if pr.Path == policy.PathBuiltin || strings.HasPrefix(pr.Path, policy.PathBuiltin+"[") {
			own = append(own, pr)
		}
	}
	if len(own) > 0 {
		return &store.ValidationError{Problems: own}
	}
	return nil
}

// decodeBuiltinText reads a builtin_rules.yaml text as the store does
// (store.DecodeRuleList), but refuses an empty text or one without a rules
// list: over the API an empty list is written as rules: [].
func decodeBuiltinText(text []byte) ([]any, error) {
	rules, listed, err := store.DecodeRuleList(text)
	switch {
	case err != nil:
		return nil, err
	case !listed:
		return nil, fmt.Errorf("the body has no rules list (write rules: [] for none)")
	}
	return rules, nil
}
