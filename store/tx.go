package store

import (
	"bytes"
	"context"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/policy"
)

// Tx is one edit of the policy document, under the backend's lock, on the
// document as read there (another replica's write included). The function
// given to Update reads it, decides (with the engine, which storage does
// not import) and stages the change; the store then validates and writes
// it atomically, or writes nothing when the function returns an error.
type Tx struct {
	s *Store
	d *configDoc
}

// Update runs fn on the policy document under the backend's lock and
// writes what it staged, returning the section's new ETag. An error from
// fn aborts the edit: nothing is written and the error is returned. A view
// made by IfMatch checks its ETag first, as every edit does. When ctx
// carries a txn.Enclosing transaction the backend can join, the write
// commits with it and goes in force only then.
func (s *Store) Update(ctx context.Context, fn func(tx *Tx) error) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return s.modifyIn(ctx, func(d *configDoc) error { return fn(&Tx{s: s, d: d}) })
}

// Section is the permissions section as read under the lock, typed (the
// absent section when the document has none).
func (tx *Tx) Section() policy.Section {
	cur, _ := tx.d.decodedPermissions()
	m, _ := cur.(map[string]any)
	return policy.DecodeSection(m)
}

// BuiltinRules are the built-in rules the document is checked with, typed.
func (tx *Tx) BuiltinRules() policy.Builtin { return policy.DecodeBuiltin(tx.s.cur.Load().builtin) }

// InForce reports whether the document read is the one the policy in force
// was loaded from (no edit elsewhere since), so that the engine in force
// decides as this document does and need not be compiled again.
func (tx *Tx) InForce() bool {
	cur := tx.s.cur.Load()
	raw := tx.d.raw
	return cur.cfgOK && len(bytes.TrimSpace(raw)) > 0 && bytes.Equal(raw, cur.cfgRaw)
}

// AddApprovalOverride stages o at the end of permissions.approval_overrides,
// unless an override with its id, or with its tools, match type and
// pattern, is there: then that one is returned and nothing is staged.
func (tx *Tx) AddApprovalOverride(o policy.Override) (existing *policy.Override, err error) {
	seq := ensureSeq(tx.d.permissionsMap(), "approval_overrides")
	if existing = findOverride(seq, &o); existing != nil {
		return existing, nil
	}
	n, err := ruleNode(&o)
	if err != nil {
		return nil, err
	}
	seq.Content = append(seq.Content, n)
	return nil, nil
}

// findOverride finds the entry of seq with the id of o, or with its tools,
// match type and pattern (policy.SameOverride), decoded.
func findOverride(seq *yaml.Node, o *policy.Override) *policy.Override {
	for _, e := range seq.Content {
		v, err := decodeNode(e)
		if err != nil {
			continue
		}
		if got, _, ok := policy.DecodeRule(v, ""); ok && policy.SameOverride(&got, o) {
			return &got
		}
	}
	return nil
}
