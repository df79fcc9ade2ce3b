// Package store keeps toolgate's policy on disk: config.yaml and
// builtin_rules.yaml in the config dir. It loads and validates them, compiles
// the engine, swaps in a new engine atomically when either file changes, and
// edits the `permissions` section through yaml.v3 nodes under a file lock so
// that every other key, every comment and the key order survive and no
// concurrent hand edit is lost.
package store
