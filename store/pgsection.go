package store

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// SectionText cuts the `permissions` entry out of a config.yaml text as a
// document whose only top-level key is `permissions`, keeping its lines as
// written: the comment block right above the key, comments inside it and
// its layout. A file without the key gives "{}\n". When the entry cannot be
// cut out as lines that mean the same (a flow-style file, an alias to an
// anchor outside it), it is re-encoded, keeping what comments yaml.v3 can.
func SectionText(config []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(config, &doc); err != nil {
		return nil, fmt.Errorf("pg: config.yaml: %w", err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
		return []byte("{}\n"), nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: its top level is not a mapping", ErrBrokenConfig)
	}
	i := keyIndex(top, "permissions")
	if i < 0 {
		return []byte("{}\n"), nil
	}
	var want any
	if err := top.Content[i+1].Decode(&want); err != nil {
		return nil, fmt.Errorf("pg: config.yaml permissions: %w", err)
	}
	if top.Style&yaml.FlowStyle == 0 {
		if text := cutLines(config, top, i); sameSection(text, want) {
			return text, nil
		}
	}
	one := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: top.Content[i : i+2]}
	if text, err := encodeYAML(one); err == nil && sameSection(text, want) {
		return text, nil
	}
	return encodeYAML(map[string]any{"permissions": want})
}

// keyIndex returns the index of key's key node in mapping m, or -1.
func keyIndex(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// cutLines returns the lines of the i-th entry of the block mapping top:
// from the comment block right above its key (no blank line between) to
// the line before the next key, less the blank lines and top-level
// comments that lead up to that next key.
func cutLines(config []byte, top *yaml.Node, i int) []byte {
	lines := strings.SplitAfter(string(config), "\n")
	start := top.Content[i].Line - 1
	for start > 0 && strings.HasPrefix(lines[start-1], "#") {
		start--
	}
	end := len(lines)
	if i+2 < len(top.Content) {
		end = top.Content[i+2].Line - 1
		for end > start+1 && (strings.TrimSpace(lines[end-1]) == "" || strings.HasPrefix(lines[end-1], "#")) {
			end--
		}
	}
	for end > start+1 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	text := strings.Join(lines[start:end], "")
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return []byte(text)
}

// sameSection reports whether text is a mapping with the one key
// `permissions` whose value decodes to want.
func sameSection(text []byte, want any) bool {
	var got map[string]any
	if err := yaml.Unmarshal(text, &got); err != nil || len(got) != 1 {
		return false
	}
	v, ok := got["permissions"]
	return ok && reflect.DeepEqual(v, want)
}

// encodeYAML encodes v with two-space indentation.
func encodeYAML(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("pg: encode section: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("pg: encode section: %w", err)
	}
	return buf.Bytes(), nil
}
