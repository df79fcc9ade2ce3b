package store

import (
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/policy"
)

// The edits write YAML nodes of the typed policy values through their one
// encoding, policy's Map methods, as toNode writes a mapping: keys in
// orderedKeys order, a `tools` list of names in flow style, scalars as
// valueNode writes them, so that a file edited reads byte for byte as
// before (the golden tests).

// keyed is one key of a mapping being written and its value node.
type keyed struct {
	key  string
	node *yaml.Node
}

// mappingNode builds a mapping of entries, sorted as orderedKeys sorts
// keys; a `tools` list of scalars is written in flow style ([bash]).
func mappingNode(entries []keyed) *yaml.Node {
	slices.SortFunc(entries, func(a, b keyed) int { return compareKeys(a.key, b.key) })
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: make([]*yaml.Node, 0, 2*len(entries))}
	for _, e := range entries {
		n.Content = append(n.Content, scalar(e.key), flowTools(e.key, e.node))
	}
	return n
}

// flowTools writes the value of a `tools` key, when it is a list of
// scalars, in flow style ([bash]), as fieldNode does; it returns n.
func flowTools(key string, n *yaml.Node) *yaml.Node {
	if key == "tools" && n.Kind == yaml.SequenceNode && allScalars(n) {
		n.Style = yaml.FlowStyle
	}
	return n
}

// levelsNode is a mapping of keys ("*", a pattern) to levels.
func levelsNode(levels []keyed) *yaml.Node { return mappingNode(levels) }

// ruleNode is the node of a rule or approval override: its mapping
// (Rule.Map, the one encoding of a rule) as toNode writes it.
func ruleNode(r *policy.Rule) (*yaml.Node, error) { return toNode(r.Map()) }

// ownerScopesNode is permissions.owner_scopes (OwnerScopes.Map, the one
// encoding of the scopes, as toNode writes it).
func ownerScopesNode(o *policy.OwnerScopes) (*yaml.Node, error) { return toNode(o.Map()) }

// setKeyed sets key in entries: a key already there takes the new node
// (the later entry wins, as in a mapping).
func setKeyed(entries []keyed, key string, n *yaml.Node) []keyed {
	for i := range entries {
		if entries[i].key == key {
			entries[i].node = n
			return entries
		}
	}
	return append(entries, keyed{key, n})
}
