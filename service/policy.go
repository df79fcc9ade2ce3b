package service

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
)

// Policy is the policy's use cases: reads, and edits that each take an
// If-Match ETag ("" or "*": no check).
//
// The check and the write are one step: a document store that can check
// the ETag itself, under its own lock right before the edit (store.Store's
// IfMatch view: the file lock, the database row lock), does so, which also
// holds against another replica's write this one has not loaded yet. Policy
// also serializes its edits and checks the ETag in force first, so a stale
// form fails fast. A page form carries the ETag it was rendered with, so an
// edit made between rendering and saving is refused with
// store.ErrPreconditionFailed instead of being lost.
type Policy struct {
	docs PolicyDocs
	// mu makes an edit's If-Match check and its write one step among the
	// edits of this process.
	mu sync.Mutex
	// typed is the last section Typed decoded, by its ETag.
	typed atomic.Pointer[typedSection]
}

// typedSection is a decoded section and the ETag of the map it came from.
type typedSection struct {
	sec  policy.Section
	etag string
}

// etagReader is a document store that tells the ETag in force without
// copying the section; *inforce.Holder is one.
type etagReader interface {
	ETag() string
}

// ifMatchDocs is a document store whose edits can check an ETag under its
// own lock; *inforce.Holder is one.
type ifMatchDocs interface {
	IfMatch(tag string) *inforce.Holder
}

// NewPolicy builds the policy service over a document store.
func NewPolicy(docs PolicyDocs) *Policy { return &Policy{docs: docs} }

// Docs returns the document store (reads).
func (p *Policy) Docs() PolicyDocs { return p.docs }

// Section returns the section in force as written, and its ETag.
func (p *Policy) Section() (policy.Written, string, error) {
	return p.docs.Written()
}

// Typed returns the section in force as a policy.Section, and its ETag.
// It is decoded once per policy version (the ETag names the content) and
// shared by every caller until the policy changes: callers read it and
// never modify its slices or maps. Over a store that tells its ETag
// (store.Store.ETag) a read of an unchanged policy copies nothing; over
// another, the section map is read (copied) and the decoding is skipped.
func (p *Policy) Typed() (policy.Section, string, error) {
	c := p.typed.Load()
	if e, ok := p.docs.(etagReader); ok && c != nil && c.etag == e.ETag() {
		return c.sec, c.etag, nil
	}
	w, etag, err := p.Section()
	if err != nil {
		return policy.Section{}, etag, err
	}
	if c != nil && c.etag == etag {
		return c.sec, etag, nil
	}
	c = &typedSection{sec: policy.DecodeSection(w.Map()), etag: etag}
	p.typed.Store(c)
	return c.sec, etag, nil
}

// edit runs write on the document store when ifMatch is empty, "*" or the
// ETag of the section; write gets the store to edit through (a view that
// checks ifMatch again under the store's lock, when the store has one).
func (p *Policy) edit(ifMatch string, write func(d PolicyDocs) (string, error)) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.editLocked(ifMatch, write)
}

// editLocked is edit with p.mu held.
func (p *Policy) editLocked(ifMatch string, write func(d PolicyDocs) (string, error)) (string, error) {
	tag := store.CleanETag(ifMatch)
	if tag == "" || tag == "*" {
		return write(p.docs)
	}
	etag, err := p.etag()
	if err != nil {
		return "", err
	}
	if tag != etag {
		return "", store.ErrPreconditionFailed
	}
	if im, ok := p.docs.(ifMatchDocs); ok {
		return write(im.IfMatch(tag))
	}
	return write(p.docs)
}

// etag is the ETag in force, without copying the section when the store
// can tell it alone.
func (p *Policy) etag() (string, error) {
	if e, ok := p.docs.(etagReader); ok {
		return e.ETag(), nil
	}
	_, etag, err := p.docs.Written()
	return etag, err
}

// ReplaceSection replaces the whole section.
func (p *Policy) ReplaceSection(ifMatch string, section policy.Written) (string, error) {
	return p.edit(ifMatch, func(d PolicyDocs) (string, error) { return d.ReplaceSection(section) })
}

// SetSettings changes the scalar settings (a key in patch.Remove is removed).
func (p *Policy) SetSettings(ifMatch string, patch policy.SettingsPatch) (string, error) {
	return p.edit(ifMatch, func(d PolicyDocs) (string, error) { return d.SetSettings(patch) })
}

// SetToolLevel sets a tool's level; an empty level removes the tool.
func (p *Policy) SetToolLevel(ifMatch, tool, level string) (string, error) {
	if level == "" {
		return p.DeleteTool(ifMatch, tool)
	}
	return p.edit(ifMatch, func(d PolicyDocs) (string, error) { return d.SetToolLevel(tool, level) })
}

// ToolLevel is one tool's new level; an empty level removes the tool.
type ToolLevel struct {
	Tool, Level string
}

// SetToolLevels sets several tools' levels as one edit: every level is
// checked first, so a bad one changes nothing; the first write is checked
// against ifMatch and each next one against the ETag the previous one
// wrote, all under one lock, so no other edit slips in between. It returns
// the last ETag; a write that fails (a full disk) stops there.
func (p *Policy) SetToolLevels(ifMatch string, levels []ToolLevel) (string, error) {
	for _, l := range levels {
		if strings.TrimSpace(l.Tool) == "" {
			return "", &policy.FieldError{Field: "tool", Message: "the tool name is empty", Err: policy.ErrInvalid}
		}
		if _, ok := policy.ParseLevel(l.Level); l.Level != "" && !ok {
			return "", &policy.FieldError{Field: "level:" + l.Tool, Message: "the level must be allow, ask or deny", Err: policy.ErrInvalid}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	tag := ifMatch
	for _, l := range levels {
		var err error
		tag, err = p.editLocked(tag, func(d PolicyDocs) (string, error) {
			if l.Level == "" {
				return d.DeleteTool(l.Tool)
			}
			return d.SetToolLevel(l.Tool, l.Level)
		})
		if err != nil {
			return "", err
		}
	}
	return tag, nil
}

// DeleteTool removes a tool's level.
func (p *Policy) DeleteTool(ifMatch, tool string) (string, error) {
	return p.edit(ifMatch, func(d PolicyDocs) (string, error) { return d.DeleteTool(tool) })
}

// CreateRule appends a rule (decoded and checked by the handler); one
// without an id gets NewID's. It returns the rule's id and the new ETag.
func (p *Policy) CreateRule(ifMatch string, rule policy.Rule) (string, string, error) {
	return p.createEntry(ifMatch, "rules", PrefixRule, rule, PolicyDocs.CreateRule)
}

// AddOverride appends an approval override (decoded and checked by the
// handler); one without an id gets NewID's.
func (p *Policy) AddOverride(ifMatch string, o policy.Override) (string, string, error) {
	return p.createEntry(ifMatch, "approval_overrides", PrefixOverride, o, PolicyDocs.AddApprovalOverride)
}

func (p *Policy) createEntry(ifMatch, list, prefix string, entry policy.Rule, add func(PolicyDocs, policy.Rule) (string, error)) (string, string, error) {
	var id string
	etag, err := p.edit(ifMatch, func(d PolicyDocs) (string, error) {
		if strings.TrimSpace(entry.ID) == "" {
			sec, _, err := p.Typed()
			if err != nil {
				return "", err
			}
			taken := sec.Rules
			if list == "approval_overrides" {
				taken = sec.Overrides
			}
			entry.ID = NewID(prefix, entry.Tools, entry.Pattern, takenIDs(taken))
		}
		id = entry.ID
		return add(d, entry)
	})
	return id, etag, err
}

// RuleIDFor is the id a rule without one gets now (NewID over the rules in
// force, not counting the rule being renamed, except).
func (p *Policy) RuleIDFor(tools []string, pattern, except string) string {
	sec, _, _ := p.Typed()
	taken := takenIDs(sec.Rules)
	return NewID(PrefixRule, tools, pattern, func(id string) bool { return id != except && taken(id) })
}

// UpdateRule patches a rule (RulePatch: fields set, fields removed; an id
// set renames it).
func (p *Policy) UpdateRule(ifMatch, id string, patch policy.RulePatch) (string, error) {
	return p.edit(ifMatch, func(d PolicyDocs) (string, error) { return d.UpdateRule(id, patch) })
}

// DeleteRule removes a rule.
func (p *Policy) DeleteRule(ifMatch, id string) (string, error) {
	return p.edit(ifMatch, func(d PolicyDocs) (string, error) { return d.DeleteRule(id) })
}

// DeleteOverride removes an approval override.
func (p *Policy) DeleteOverride(ifMatch, id string) (string, error) {
	return p.edit(ifMatch, func(d PolicyDocs) (string, error) { return d.DeleteApprovalOverride(id) })
}

// SetExternal sets external_directory[key] to a level.
func (p *Policy) SetExternal(ifMatch, key, level string) (string, error) {
	return p.edit(ifMatch, func(d PolicyDocs) (string, error) { return d.SetExternalDirectory(key, level) })
}

// DeleteExternal removes external_directory[key].
func (p *Policy) DeleteExternal(ifMatch, key string) (string, error) {
	return p.edit(ifMatch, func(d PolicyDocs) (string, error) { return d.DeleteExternalDirectory(key) })
}

// AddDir is /add-dir: trust a directory (external_directory, and the two
// overrides of a tiered policy).
func (p *Policy) AddDir(ifMatch, path string) (store.AddDirResult, error) {
	var res store.AddDirResult
	_, err := p.edit(ifMatch, func(d PolicyDocs) (string, error) {
		var err error
		res, err = d.AddTrustedDirectory(path, dirTools)
		return "", err
	})
	return res, err
}

// dirTools are the tools /add-dir's two overrides name.
var dirTools = store.DirTools{Path: engine.PathTools, Shell: engine.ShellTools}

// EngineOptions are the options the policy in force is compiled with, for
// checks that must decide as it does (a rule's examples in the form).
func (p *Policy) EngineOptions() engine.Options { return p.docs.EngineOptions() }

// Validate dry-runs a section against the built-in rules in force, with
// the options the policy in force is compiled with, and returns every
// problem; nothing is written.
func (p *Policy) Validate(section policy.Written) []policy.Problem {
	_, problems := p.compileWritten(&section)
	return problems
}

// compileWritten compiles a section as written with the built-in rules
// and the options of the policy in force, so that it decides as the policy
// in force would were it written.
func (p *Policy) compileWritten(section *policy.Written) (*engine.Engine, []policy.Problem) {
	raw, _ := p.docs.BuiltinRules()
	sec, builtin := section.Section(), policy.DecodeBuiltin(raw)
	return engine.CompileSection(&sec, &builtin, p.docs.EngineOptions())
}
