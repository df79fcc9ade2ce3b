// Package store keeps toolgate's policy document: the `permissions` section
// and the built-in rules. A Store loads them from a Backend, validates them,
// compiles them through the function it is given (Options.Compile: package
// inforce gives the engine's; storage imports no engine) and swaps the
// document and what was compiled in atomically, together, when the
// document changes; it edits the section through yaml.v3 nodes inside the
// backend's Update, which re-reads the document under the backend's lock,
// so that every other key, every comment and the key order survive and no
// concurrent edit is lost. A large document's long lists load in pieces
// on all cores (store/yamlsplit), only where that provably reads as one
// yaml.v3 parse of the whole file.
//
// FileBackend is the embedded default (Open): config.yaml and
// builtin_rules.yaml in the config dir, a lock file, atomic writes and an
// fsnotify watch. PGBackend (pgbackend.go, with the import of a config dir
// and the export of the section in pgimport.go and pgsection.go) keeps it
// in PostgreSQL for several replicas, on store/pg's connection
// (OpenPGBackend, then inforce.OpenBackend). When the backend cannot be reached the
// policy in force keeps deciding, edits fail with ErrUnavailable, and
// Health says why until the backend answers again.
package store
