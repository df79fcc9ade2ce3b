package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
)

// AlwaysAllow persists an "always allow" answer to req by a named person
// (docs/decisions.md): when the policy document, as read under the store's
// lock, decides ask for req, it appends the approval override
// {id: user_allow_<tool>_<match_type>_<pattern>, tools: [<tool>],
// match_type, pattern, action: allow, source: user_approval}, with
// approved_by (the token's name) and created_at (UTC, RFC 3339) when by is
// given, which the overrides page shows and the engine ignores. The
// pattern is the exact command of a shell tool or the first path value of
// a path tool. When an override with that id (or the same tool, match
// type and pattern) exists, it is returned with created false.
// store.ErrNotAsk when the decision is not ask; store.ErrNoPattern for a
// call with no command or path. approval.Manager calls it through its
// Persister, with a ctx that may carry the shared ask store's transaction:
// the override is then written inside it (txn.Enclosing).
func (p *Policy) AlwaysAllow(ctx context.Context, req *engine.Request, by string) (policy.Override, bool, error) {
	var staged alwaysAllowEdit
	_, err := p.edit("", func(d PolicyDocs) (string, error) {
		return d.Update(ctx, func(tx *store.Tx) error { return staged.stage(d, tx, req, by) })
	})
	switch {
	case errors.Is(err, errExists):
		return *staged.existing, false, nil
	case err != nil:
		return policy.Override{}, false, err
	}
	return staged.override, true, nil
}

// alwaysAllowEdit is one "always allow" edit: the override it stages, or
// the one it found there already.
type alwaysAllowEdit struct {
	override policy.Override
	existing *policy.Override
}

// stage checks, on the document tx read (so that a rule added elsewhere
// since the ask is seen), that req is still asked, and stages the override
// that remembers it, or ends with errExists when an equal one is there. A
// call that is no longer asked is refused with store.ErrNotAsk before its
// pattern is looked at: there is nothing to remember either way.
func (e *alwaysAllowEdit) stage(d PolicyDocs, tx *store.Tx, req *engine.Request, by string) error {
	o, lvl, err := engineOf(d, tx).RememberAsked(req)
	switch {
	case lvl != policy.Ask:
		return fmt.Errorf("%w (it is %s)", store.ErrNotAsk, lvl)
	case err != nil:
		return rememberError(req, err)
	}
	e.override = o
	if by = strings.TrimSpace(by); by != "" {
		e.override.Extra = map[string]any{"approved_by": by, "created_at": time.Now().UTC().Format(time.RFC3339)}
	}
	if e.existing, err = tx.AddApprovalOverride(e.override); err == nil && e.existing != nil {
		return errExists
	}
	return err
}

// errExists aborts an always-allow whose override is there already:
// nothing is written and the existing one is returned.
var errExists = errors.New("service: the override exists")

// engineOf is the engine of the document tx read: the engine in force when
// that is the document it was compiled from (no edit elsewhere since, the
// common case), so that the check does not compile the policy again. The
// grants are left out: they answer for a session or a while, not for the
// document an override is written into.
func engineOf(d PolicyDocs, tx *store.Tx) *engine.Engine {
	if tx.InForce() {
		return d.CompiledEngine()
	}
	sec, builtin := tx.Section(), tx.BuiltinRules()
	eng, _ := engine.CompileSection(&sec, &builtin, d.EngineOptions())
	return eng
}

// rememberError is the service's error for engine.AlwaysAllowOverride's
// (engine.Remembered and policy.AlwaysAllow decide what an always-allow
// remembers): a store.ValidationError naming the field (tool_name for a call
// without a tool), store.ErrNoPattern for a call with no command or path.
func rememberError(req *engine.Request, err error) error {
	var fe *policy.FieldError
	switch {
	case errors.As(err, &fe):
		return &store.ValidationError{Problems: []policy.Problem{{Path: fe.Field, Message: fe.Message}}}
	case errors.Is(err, policy.ErrNothingToRemember):
		return fmt.Errorf("%s: %w", req.Call.Tool(), store.ErrNoPattern)
	}
	return err
}
