package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/jackc/pgx/v5"
	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/store/pg"
)

// ErrNoDocument is Document.ConfigErr while the database holds no policy
// yet (before Import); it wraps fs.ErrNotExist, as a missing config.yaml.
var ErrNoDocument = fmt.Errorf("pg: no policy document in the database yet: %w", fs.ErrNotExist)

// ErrNotSection is returned by Update when edit produced text that is not a
// YAML document whose only top-level key is `permissions`.
var ErrNotSection = errors.New("pg: the policy text must be a YAML mapping whose only key is `permissions`")

// PGBackend is the policy document in PostgreSQL, a Backend: the
// `permissions` section as YAML text (comments kept) and the built-in rules
// text, in one row with a version. Writes lock the row, so edits through
// any replica are serialised and none is lost; each one notifies
// pg.ChannelPolicy with the new version.
type PGBackend struct {
	db *pg.DB
}

var _ Backend = (*PGBackend)(nil)

// OpenPGBackend migrates pg.PartPolicy and returns the backend.
func OpenPGBackend(ctx context.Context, db *pg.DB) (*PGBackend, error) {
	if err := pg.MigrateParts(ctx, db, pg.PartPolicy); err != nil {
		return nil, err
	}
	return &PGBackend{db: db}, nil
}

// Name is "postgres".
func (p *PGBackend) Name() string { return "postgres" }

// Read returns the stored document; Config is nil and ConfigErr is
// ErrNoDocument before anything was imported or written.
func (p *PGBackend) Read(ctx context.Context) (Document, error) {
	octx, cancel := p.db.Op(ctx)
	defer cancel()
	doc, err := readDocument(octx, p.db.Pool(), "")
	return doc, p.db.Wrap(ctx, err, "read policy")
}

// readDocument reads the row with q ("" or " FOR UPDATE" appended).
func readDocument(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, lock string) (Document, error) {
	var config, builtin *string
	var version int64
	err := q.QueryRow(ctx, "SELECT config, builtin, version FROM policy_document WHERE id = 1"+lock).
		Scan(&config, &builtin, &version)
	if err != nil {
		return Document{}, err
	}
	doc := Document{Version: strconv.FormatInt(version, 10)}
	if config == nil {
		doc.ConfigErr = ErrNoDocument
	} else {
		doc.Config = []byte(*config)
	}
	if builtin != nil {
		doc.Builtin = []byte(*builtin)
	}
	return doc, nil
}

// Update locks the row, calls edit with the current document and stores
// the text it returns with the version raised by one, notifying every
// replica, all in one transaction. An error of edit is returned as is and
// nothing is written. Each statement is bounded by the OpTimeout; edit
// (which may compile a large policy) is not.
func (p *PGBackend) Update(ctx context.Context, edit func(cur Document) ([]byte, error)) (Document, error) {
	out, err := p.update(ctx, edit)
	var ee editError
	switch {
	case errors.As(err, &ee):
		return Document{}, ee.err
	case err != nil:
		return Document{}, p.db.Wrap(ctx, err, "update policy")
	}
	return out, nil
}

// editError carries an error of the edit callback (or of checkSection)
// out of update unchanged.
type editError struct{ err error }

func (e editError) Error() string { return e.err.Error() }

func (p *PGBackend) update(ctx context.Context, edit func(cur Document) ([]byte, error)) (Document, error) {
	octx, cancel := p.db.Op(ctx)
	tx, err := p.db.Beginner(octx).Begin(octx)
	cancel()
	if err != nil {
		return Document{}, err
	}
	defer func() {
		rctx, cancel := p.db.Op(context.WithoutCancel(ctx))
		_ = tx.Rollback(rctx) // after Commit, a no-op
		cancel()
	}()
	octx, cancel = p.db.Op(ctx)
	cur, err := readDocument(octx, tx, " FOR UPDATE")
	cancel()
	if err != nil {
		return Document{}, err
	}
	next, err := edit(cur)
	if err == nil {
		err = checkSection(next)
	}
	if err != nil {
		return Document{}, editError{err}
	}
	octx, cancel = p.db.Op(ctx)
	defer cancel()
	var version int64
	if err := tx.QueryRow(octx, `UPDATE policy_document SET config = $1, version = version + 1, updated_at = now()
		WHERE id = 1 RETURNING version`, string(next)).Scan(&version); err != nil {
		return Document{}, err
	}
	out := Document{Config: next, Builtin: cur.Builtin, Version: strconv.FormatInt(version, 10)}
	if _, err := tx.Exec(octx, "SELECT pg_notify($1, $2)", pg.ChannelPolicy, out.Version); err != nil {
		return Document{}, err
	}
	return out, tx.Commit(octx)
}

// Watch calls changed after every policy notification and after every
// (re)connect of the Listener (a notification may have been missed), until
// ctx ends. It returns at once. changed runs on a goroutine of its own,
// one call at a time, with signals that arrive during a call folded into
// one more call, so a slow reload never holds up the Listener.
// Notifications of this process's own writes call it too (spuriously).
func (p *PGBackend) Watch(ctx context.Context, changed func()) error {
	run := p.db.Listener().Watch(ctx, pg.ChannelPolicy, changed)
	go run() // ends with ctx; its error is ctx's
	return nil
}

// checkSection accepts a YAML text whose top level is empty or a mapping
// whose only key is `permissions`: the form the section is stored in.
func checkSection(text []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return fmt.Errorf("%w: %w", ErrNotSection, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return nil
	}
	if top.Kind != yaml.MappingNode {
		return ErrNotSection
	}
	for i := 0; i < len(top.Content); i += 2 {
		if top.Content[i].Value != "permissions" {
			return fmt.Errorf("%w (found %q)", ErrNotSection, top.Content[i].Value)
		}
	}
	return nil
}
