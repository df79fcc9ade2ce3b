package yamlsplit

import (
	"bytes"
	"fmt"
	"sort"

	"gopkg.in/yaml.v3"
)

// The tests hold Decode to the store's reading of a file: these are the
// store's own normalize (its Finish, less the compaction) and writer.

// normalize turns map[any]any (as YAML may decode) into map[string]any,
// recursively, so that values can be compared, hashed and sent as JSON.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = normalize(e)
		}
		return out
	case map[any]any:
		// Keys that print alike (1 and "1", .nan and NaN) would leave the
		// value to map order: the later key in one fixed order wins, so a
		// file always reads the same.
		type pair struct {
			name, kind string
			v          any
		}
		pairs := make([]pair, 0, len(t))
		for k, e := range t { // a NaN key is found by ranging only
			pairs = append(pairs, pair{fmt.Sprint(k), fmt.Sprintf("%T", k), e})
		}
		sort.Slice(pairs, func(i, j int) bool {
			if pairs[i].name != pairs[j].name {
				return pairs[i].name < pairs[j].name
			}
			if pairs[i].kind != pairs[j].kind {
				return pairs[i].kind < pairs[j].kind
			}
			return fmt.Sprint(pairs[i].v) < fmt.Sprint(pairs[j].v) // two NaN keys
		})
		out := make(map[string]any, len(t))
		for _, p := range pairs {
			out[p.name] = normalize(p.v)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalize(e)
		}
		return out
	case []string:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = e
		}
		return out
	}
	return v
}

// scalar is a string node, as the store writes one.
func scalar(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if s == "*" {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// encodeNode writes n as the store does.
func encodeNode(n *yaml.Node, indent int) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(indent)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
