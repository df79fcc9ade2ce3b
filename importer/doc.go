// Package importer converts an agent's own permission settings into
// toolgate's: Claude Code's settings.json permissions, Codex's .rules files,
// Gemini CLI's policy TOML and opencode's permission blocks
// (docs/import.md). It owns reading those formats, mapping each agent's tool
// names and patterns onto toolgate's tools, levels and rules, keeping the
// source's precedence or saying where it cannot, and listing every entry it
// could not carry over with the reason.
//
// It does not write a policy, reach a server or decide a call: it returns a
// Result that cmd/toolgate prints and, with --write, sends through the REST
// API, and the server's engine decides. It uses the engine only to check a
// rule's examples as the server will when they are written
// (docs/configuration.md#rule-examples), so an example that does not hold
// is reported instead of making the server refuse the import.
package importer
