package store

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/toolgate/toolgate/policy"
)

// lossyConfig is written in every shape policy.Section reads lossily:
// levels in other cases, a tools scalar in a rule, a padded guidance, a
// numeric schema, defaults' other keys, a tool's extra key and legacy
// patterns under a tiered schema, empty mappings, unknown keys, comments.
const lossyConfig = `# head
permissions:
  enabled: true
  schema: tiered_policy # the schema
  permission_mode: STRICT
  deny_guidance_message: "  padded  "
  defaults: {"*": DENY, other: 1}
  tools:
    read_file: ALLOW # read
    bash: {"*": Ask, patterns: {"git *": allow}, extra: [1, 2]}
  rules:
    # the first rule
    - id: r1
      tools: bash
      pattern: "rm -rf *"
      action: DENY
      approved_by: me
      created_at: "2024-01-02T00:00:00Z"
  approval_overrides: []
  external_directory: {}
  owner_scopes: {}
  unknown_key: {a: [1, "<b>&"]}
other: section
`

// TestWrittenRoundTripKeepsTheFile: the section read as written and
// replaced with itself, straight or through its JSON as GET answers it and
// PUT reads it, writes the same file; a file already in the layout the
// store writes (the lossy one) stays byte for byte as it was. Numbers come
// back from JSON as float64: unchanged nodes are still kept (sameValue).
func TestWrittenRoundTripKeepsTheFile(t *testing.T) {
	for _, c := range []struct {
		note, fixture, text string
		unchanged           bool
	}{
		{"the test config", "config.yaml", "", false},
		{"the legacy config", "legacy.yaml", "", false},
		{"every lossy shape", "", lossyConfig, true},
	} {
		var written [2][]byte
		for i, viaJSON := range []bool{false, true} {
			before, after := replaceWithItself(t, c.fixture, c.text, viaJSON)
			written[i] = after
			if c.unchanged && !bytes.Equal(after, before) {
				t.Errorf("%s (JSON %v): the file changed:\n%s\nwas\n%s", c.note, viaJSON, after, before)
			}
		}
		if !bytes.Equal(written[0], written[1]) {
			t.Errorf("%s: through JSON wrote\n%s\nstraight\n%s", c.note, written[1], written[0])
		}
	}
}

// replaceWithItself opens a store on the fixture (or text) and replaces the
// section with itself as written, through its JSON when viaJSON; it
// returns config.yaml before and after.
func replaceWithItself(t *testing.T, fixture, text string, viaJSON bool) (before, after []byte) {
	t.Helper()
	s, dir := openFixture(t, fixture)
	path := filepath.Join(dir, ConfigFile)
	if text != "" {
		writeFile(t, path, []byte(text))
		if err := s.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	before = readFile(t, path)
	w, tag, err := s.Written()
	if err != nil {
		t.Fatal(err)
	}
	if viaJSON {
		data, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		var body policy.Mapping
		if err := jsonv2.Unmarshal(data, &body); err != nil {
			t.Fatal(err)
		}
		w = body.Written()
	}
	if _, err := s.IfMatch(tag).ReplaceSection(w); err != nil {
		t.Fatal(err)
	}
	return before, readFile(t, path)
}
