package store

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/policy"
)

// The edits write YAML nodes straight from the typed policy values. Each
// node is the one toNode would make of the value's decoded mapping
// (policy's Map methods): keys in orderedKeys order, a `tools` list of
// names in flow style, scalars as valueNode writes them, so that a file
// edited reads byte for byte as before (the golden tests).

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

// stringsNode is a list of strings.
func stringsNode(values []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: make([]*yaml.Node, len(values))}
	for i, v := range values {
		n.Content[i] = valueNode(v)
	}
	return n
}

// levelsNode is a mapping of keys ("*", a pattern) to levels.
func levelsNode(levels []keyed) *yaml.Node { return mappingNode(levels) }

// levelEntry is key: level.
func levelEntry(key string, l policy.Level) keyed { return keyed{key, valueNode(l.String())} }

// ruleNode is the node of a rule or approval override (what toNode makes
// of Rule.Map).
func ruleNode(r *policy.Rule) (*yaml.Node, error) {
	keys := make([]string, 0, len(ruleKeys)+len(r.Extra))
	keys = append(keys, ruleKeys[:]...)
	for k := range r.Extra {
		if !slices.Contains(ruleKeys[:], k) {
			keys = append(keys, k)
		}
	}
	entries := make([]keyed, 0, len(keys))
	for _, k := range keys {
		n, ok, err := ruleFieldNode(r, k)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if ok {
			entries = append(entries, keyed{k, n})
		}
	}
	return mappingNode(entries), nil
}

// ruleKeys are the keys of a rule's own fields.
var ruleKeys = [...]string{"id", "tools", "pattern", "match_type", "action", "severity", "description", "source", "mode", "examples"}

// ruleFieldNode is the value node of key in the rule's mapping, as
// Rule.Map renders it: a field of the rule when it is written, else the
// Extra value of that key; ok is false when the mapping has no such key.
func ruleFieldNode(r *policy.Rule, key string) (n *yaml.Node, ok bool, err error) {
	if n := ownFieldNode(r, key); n != nil {
		return flowTools(key, n), true, nil
	}
	v, ok := r.Extra[key]
	if !ok {
		return nil, false, nil
	}
	if n, err = toNode(v); err != nil {
		return nil, false, err
	}
	return flowTools(key, n), true, nil
}

// ownFieldNode is the node of one of the rule's own fields, nil when
// Rule.Map leaves it out.
func ownFieldNode(r *policy.Rule, key string) *yaml.Node {
	text := ""
	switch key {
	case "id":
		text = r.ID
	case "tools":
		if r.Tools == nil {
			return nil
		}
		return stringsNode(r.Tools)
	case "pattern":
		return valueNode(r.Pattern) // always written
	case "match_type":
		text = r.MatchType
	case "action":
		switch {
		case r.Action != policy.LevelNone:
			text = r.Action.String()
		case r.BadAction != "":
			text = r.BadAction
		}
	case "severity":
		switch {
		case r.BadSeverity != "":
			text = r.BadSeverity
		case r.Severity != 0:
			text = r.Severity.String()
		}
	case "description":
		text = r.Description
	case "source":
		text = r.Source
	case "mode":
		text = r.Mode
	case "examples":
		if r.Examples == nil {
			return nil
		}
		return examplesNode(r.Examples)
	}
	if text == "" {
		return nil
	}
	return valueNode(text)
}

// examplesNode is a rule's examples mapping, each list only when it has
// values.
func examplesNode(x *policy.Examples) *yaml.Node {
	var entries []keyed
	if len(x.Match) > 0 {
		entries = append(entries, keyed{policy.ExampleMatch, stringsNode(x.Match)})
	}
	if len(x.NoMatch) > 0 {
		entries = append(entries, keyed{policy.ExampleNoMatch, stringsNode(x.NoMatch)})
	}
	return mappingNode(entries)
}

// ownerScopesNode is permissions.owner_scopes: channel -> principal ->
// scope (what toNode makes of OwnerScopes.Map). A channel or principal
// named twice is written once, the later one winning, as in a mapping.
func ownerScopesNode(o *policy.OwnerScopes) *yaml.Node {
	channels := make([]keyed, 0, len(o.Channels))
	for _, ch := range o.Channels {
		principals := make([]keyed, 0, len(ch.Principals))
		for i := range ch.Principals {
			principals = setKeyed(principals, ch.Principals[i].Principal, ownerScopeNode(&ch.Principals[i]))
		}
		channels = setKeyed(channels, ch.Channel, mappingNode(principals))
	}
	return mappingNode(channels)
}

// ownerScopeNode is one scope: {tools: {...}, defaults: {"*": level}}.
func ownerScopeNode(ps *policy.OwnerScope) *yaml.Node {
	var entries []keyed
	if ps.Tools != nil {
		tools := make([]keyed, 0, len(ps.Tools))
		for _, t := range ps.Tools {
			tools = setKeyed(tools, t.Tool, toolLevelNode(t.Level, t.Star, t.Patterns))
		}
		entries = append(entries, keyed{"tools", mappingNode(tools)})
	}
	if ps.Defaults != policy.LevelNone {
		entries = append(entries, keyed{"defaults", levelsNode([]keyed{levelEntry("*", ps.Defaults)})})
	}
	return mappingNode(entries)
}

// toolLevelNode is a tool's entry: a plain level, or a mapping with "*"
// and patterns.
func toolLevelNode(l policy.Level, star bool, patterns []policy.LegacyPattern) *yaml.Node {
	if !star && patterns == nil && l != policy.LevelNone {
		return valueNode(l.String())
	}
	var entries []keyed
	if star {
		entries = append(entries, levelEntry("*", l))
	}
	if patterns != nil {
		pats := make([]keyed, 0, len(patterns))
		for _, p := range patterns {
			pats = setKeyed(pats, p.Pattern, valueNode(p.Level.String()))
		}
		entries = append(entries, keyed{"patterns", levelsNode(pats)})
	}
	return mappingNode(entries)
}

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
