// Package builtin holds the package default builtin_rules.yaml, embedded in
// the binary. A builtin_rules.yaml in the config dir replaces it (docs/configuration.md#builtin_rulesyaml).
package builtin

import _ "embed"

// Default is the text of the package default builtin_rules.yaml: a top-level
// `rules:` list in the format of permissions.rules.
//
//go:embed builtin_rules.yaml
var Default []byte
