package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/store/pg"
)

// Import fills an empty database from the config dir at first start: the
// `permissions` entry of config.yaml as its lines (comments kept; see
// SectionText), or of DefaultConfig when there is no config.yaml,
// and builtin_rules.yaml when present. It does nothing when the database
// already holds a document, so every replica may call it at every start;
// of replicas starting together exactly one imports. A config.yaml that
// cannot be read or parsed is an error rather than a silent default.
func (p *PGBackend) Import(ctx context.Context, dir string) (imported bool, err error) {
	config, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if errors.Is(err, fs.ErrNotExist) {
		config = []byte(DefaultConfig)
	} else if err != nil {
		return false, fmt.Errorf("pg: import: %w", err)
	}
	section, err := SectionText(config)
	if err != nil {
		return false, fmt.Errorf("pg: import %s: %w", ConfigFile, err)
	}
	var builtin *string
	switch raw, err := os.ReadFile(filepath.Join(dir, BuiltinFile)); {
	case err == nil:
		s := string(raw)
		builtin = &s
	case !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("pg: import: %w", err)
	}
	octx, cancel := p.db.Op(ctx)
	defer cancel()
	err = pgx.BeginFunc(octx, p.db.Pool(), func(tx pgx.Tx) error {
		cur, err := readDocument(octx, tx, " FOR UPDATE")
		if err != nil || cur.ConfigErr == nil {
			return err
		}
		if _, err := tx.Exec(octx, `UPDATE policy_document SET config = $1, builtin = $2, version = version + 1,
			updated_at = now() WHERE id = 1`, string(section), builtin); err != nil {
			return err
		}
		imported = true
		_, err = tx.Exec(octx, "SELECT pg_notify($1, 'import')", pg.ChannelPolicy)
		return err
	})
	if err != nil {
		return false, p.db.Wrap(ctx, err, "import")
	}
	return imported, nil
}

// Export returns the stored section as a config.yaml document (its only
// top-level key is `permissions`, its comments are the stored ones), for
// GET /api/v1/permissions/export. Before anything is stored it returns
// ErrNoDocument.
func (p *PGBackend) Export(ctx context.Context) ([]byte, error) {
	doc, err := p.Read(ctx)
	if err != nil {
		return nil, err
	}
	if doc.ConfigErr != nil {
		return nil, doc.ConfigErr
	}
	return doc.Config, nil
}

// SetBuiltin replaces the user's built-in rule list text (nil: none, so
// that the package's rules are in force) and notifies every replica. In
// file mode the user edits builtin_rules.yaml; with a database this is the
// way to change it after the first import. The text is stored as given:
// the Store above reports a list that does not parse, as for the file.
func (p *PGBackend) SetBuiltin(ctx context.Context, text []byte) (Document, error) {
	var builtin *string
	if text != nil {
		s := string(text)
		builtin = &s
	}
	octx, cancel := p.db.Op(ctx)
	defer cancel()
	var doc Document
	err := pgx.BeginFunc(octx, p.db.Pool(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(octx, `UPDATE policy_document SET builtin = $1, version = version + 1,
			updated_at = now() WHERE id = 1`, builtin); err != nil {
			return err
		}
		var err error
		if doc, err = readDocument(octx, tx, ""); err != nil {
			return err
		}
		_, err = tx.Exec(octx, "SELECT pg_notify($1, $2)", pg.ChannelPolicy, doc.Version)
		return err
	})
	if err != nil {
		return Document{}, p.db.Wrap(ctx, err, "set builtin rules")
	}
	return doc, nil
}
