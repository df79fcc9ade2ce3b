package store

import (
	"context"

	"github.com/toolgate/toolgate/store/pg"
)

// ErrUnavailable is wrapped by every storage error that means the shared
// database cannot be reached right now. Reads of state already in memory go
// on; writes answer 503 and new asks are denied until it comes back.
//
// It is pg.ErrUnavailable, the one sentinel of the file stores and of
// every PostgreSQL store.
var ErrUnavailable = pg.ErrUnavailable

// Document is the stored policy text as one read saw it.
type Document struct {
	// Config is the text that holds the `permissions` section: the whole
	// config.yaml for the file backend (every other key and comment kept),
	// or a document whose only top-level key is `permissions` for a database.
	Config []byte
	// ConfigErr is why Config could not be read (fs.ErrNotExist for a missing
	// file); Config is nil then.
	ConfigErr error
	// Builtin is the user's built-in rule list text (builtin_rules.yaml);
	// nil when there is none, so that the package's rules are in force.
	Builtin []byte
	// BuiltinErr is why Builtin could not be read (other than absence).
	BuiltinErr error
	// Version changes whenever Config or Builtin does (a database row
	// version; for files, empty: the bytes themselves are compared).
	Version string
}

// Backend is where the policy document lives: config.yaml and
// builtin_rules.yaml in the config dir (FileBackend), or rows of a shared
// database. The Store above it parses, validates, compiles and edits; a
// Backend only reads, writes atomically and tells of outside changes.
type Backend interface {
	// Name says where the document lives, for messages ("config.yaml",
	// "postgres").
	Name() string
	// Read returns the current document. An error means the backend could
	// not be asked at all (wrapping ErrUnavailable for a database); a missing
	// config is reported in Document.ConfigErr instead.
	Read(ctx context.Context) (Document, error)
	// Update holds the backend's write lock (a file lock, a row lock), reads
	// the latest document, calls edit with it and stores the Config text
	// edit returns in one atomic step. When edit fails nothing is written and
	// its error is returned as is. The returned Document is what was stored.
	Update(ctx context.Context, edit func(cur Document) ([]byte, error)) (Document, error)
	// Watch calls changed (from its own goroutine) after the document changed
	// outside this process, until ctx ends. It may call changed spuriously.
	Watch(ctx context.Context, changed func()) error
}
