package store

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/policy"
)

// scalar makes a plain string scalar node.
// The key "*" is written double-quoted, as people write it by hand.
func scalar(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if s == "*" {
		n.Style = yaml.DoubleQuotedStyle
	}
	exactString(n)
	return n
}

// mapGet returns the key and value nodes of key in a mapping node.
func mapGet(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// mapSet sets key to v, keeping the key's place and comments; a new key is
// appended. The old value's line comment moves to a new scalar value.
func mapSet(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			if v.Kind == yaml.ScalarNode && v.LineComment == "" {
				v.LineComment = old.LineComment
			}
			if v.HeadComment == "" {
				v.HeadComment = old.HeadComment
			}
			if v.FootComment == "" {
				v.FootComment = old.FootComment
			}
			m.Content[i+1] = v
			return
		}
	}
	mapAppend(m, scalar(key), v)
}

// mapAppend appends a key and value. A foot comment of the last key (such as
// "# end of section") moves to the new last key so that it stays last.
func mapAppend(m *yaml.Node, k, v *yaml.Node) {
	if n := len(m.Content); n >= 2 && m.Content[n-2].FootComment != "" && k.FootComment == "" {
		k.FootComment, m.Content[n-2].FootComment = m.Content[n-2].FootComment, ""
	}
	m.Content = append(m.Content, k, v)
}

// mapDelete removes key; it reports whether the key was there.
func mapDelete(m *yaml.Node, key string) bool {
	if m == nil || m.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			foot := m.Content[i].FootComment
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			if n := len(m.Content); foot != "" && i == n && n >= 2 && m.Content[n-2].FootComment == "" {
				m.Content[n-2].FootComment = foot
			}
			return true
		}
	}
	return false
}

// ensureMap returns the mapping at key, creating it (or replacing a
// non-mapping value) when needed.
func ensureMap(m *yaml.Node, key string) *yaml.Node {
	_, v := mapGet(m, key)
	if v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	mapSet(m, key, n)
	return n
}

// ensureSeq returns the sequence at key, creating it when needed. An empty
// flow sequence (`rules: []`) turns into a block sequence so that appended
// entries read well.
func ensureSeq(m *yaml.Node, key string) *yaml.Node {
	_, v := mapGet(m, key)
	if v != nil && v.Kind == yaml.SequenceNode {
		if len(v.Content) == 0 {
			v.Style &^= yaml.FlowStyle
		}
		return v
	}
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	mapSet(m, key, n)
	return n
}

// orderedKeys sorts keys by policy.KeyRank, then alphabetically. "*"
// comes first.
func orderedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	return keys
}

// compareKeys orders keys by policy.KeyRank, then alphabetically.
func compareKeys(a, b string) int {
	if c := cmp.Compare(policy.KeyRank(a), policy.KeyRank(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// toNode builds a node for a decoded JSON/YAML value, with mapping keys in
// orderedKeys order and `tools` lists of scalars in flow style ([bash]).
func toNode(v any) (*yaml.Node, error) {
	switch t := normalize(v).(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range orderedKeys(t) {
			c, err := toNode(t[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			if k == "tools" && c.Kind == yaml.SequenceNode && allScalars(c) {
				c.Style = yaml.FlowStyle
			}
			n.Content = append(n.Content, scalar(k), c)
		}
		return n, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for i, e := range t {
			c, err := toNode(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			n.Content = append(n.Content, c)
		}
		return n, nil
	default:
		return encodeScalar(t)
	}
}

// encodeScalar is the node of a value that is not a mapping or a list.
func encodeScalar(v any) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	if str, ok := v.(string); ok && n.Kind == yaml.ScalarNode {
		n.Value = str // Encode drops a leading newline
	}
	exactString(&n)
	return &n, nil
}

// valueNode is the node of a string or bool value, as toNode writes it
// (such values always encode).
func valueNode[T string | bool](v T) *yaml.Node {
	n, err := encodeScalar(v)
	if err != nil {
		panic(fmt.Sprintf("store: encode %v: %v", v, err))
	}
	return n
}

// exactString writes a string that a block or plain scalar would not read
// back as written (yaml.v3 drops a leading newline from a literal block)
// double-quoted, where every character is escaped exactly.
func exactString(n *yaml.Node) {
	for _, c := range n.Content {
		exactString(c)
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" || n.Value == "" {
		return
	}
	v := n.Value
	if strings.ContainsAny(v, "\n\r\t") || strings.TrimSpace(v) != v {
		n.Style = yaml.DoubleQuotedStyle
	}
}

func allScalars(n *yaml.Node) bool {
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return false
		}
	}
	return true
}

// normalize turns map[any]any (as YAML may decode) into map[string]any,
// recursively, so that values can be compared, hashed and sent as JSON.
// Every map and list of the result is new, so on a normalized value it is
// a deep copy.
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

// decodeNode decodes a node into a normalized value.
func decodeNode(n *yaml.Node) (any, error) {
	var out any
	if err := n.Decode(&out); err != nil {
		return nil, err
	}
	return normalize(out), nil
}
