package store

import (
	"testing"

	"gopkg.in/yaml.v3"
)

// TestValuesReadBackAsWritten writes strings that YAML styles bend (a
// leading newline, which yaml.v3's literal block drops, trailing blanks,
// tabs, words YAML reads as other types) and reads them back.
func TestValuesReadBackAsWritten(t *testing.T) {
	cases := []struct{ note, value string }{
		{"a leading newline", "\nmake x"},
		{"two leading newlines", "\n\ngit push"},
		{"a trailing newline", "ls\n"},
		{"leading and trailing blanks", "  rm -rf x  "},
		{"a tab", "a\tb"},
		{"a carriage return", "a\rb"},
		{"a word YAML reads as a boolean", "yes"},
		{"a number", "0123"},
		{"a comment sign", "# not a comment"},
		{"a colon", "key: value"},
		{"the glob star", "*"},
		{"Chinese", "构建 项目"},
		{"a multi-line script", "set -e\nmake\nmake test"},
	}
	for _, c := range cases {
		n, err := toNode(map[string]any{"pattern": c.value, "description": c.value})
		if err != nil {
			t.Fatalf("%s: %v", c.note, err)
		}
		data, err := yaml.Marshal(n)
		if err != nil {
			t.Fatalf("%s: %v", c.note, err)
		}
		var back map[string]string
		if err := yaml.Unmarshal(data, &back); err != nil {
			t.Fatalf("%s: %v\n%s", c.note, err, data)
		}
		if back["pattern"] != c.value || back["description"] != c.value {
			t.Errorf("%s: wrote %q, read back %q and %q:\n%s", c.note, c.value, back["pattern"], back["description"], data)
		}
	}
}
