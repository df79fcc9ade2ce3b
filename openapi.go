// Package toolgate holds the files of the repository root that the binary
// embeds: openapi.yaml.
package toolgate

import _ "embed"

// OpenAPI is the text of openapi.yaml, served at /openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
