package store

import "gopkg.in/yaml.v3"

// ToolOrder returns the names under permissions.tools in the order of
// config.yaml as last read, so views can list them as the file does (the
// decoded Section map has no order). It is nil when there are none.
func (s *Store) ToolOrder() []string {
	var doc yaml.Node
	if err := yaml.Unmarshal(s.cur.Load().cfgRaw, &doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	tools := mappingValue(mappingValue(doc.Content[0], "permissions"), "tools")
	if tools == nil || tools.Kind != yaml.MappingNode {
		return nil
	}
	names := make([]string, 0, len(tools.Content)/2)
	for i := 0; i+1 < len(tools.Content); i += 2 {
		names = append(names, tools.Content[i].Value)
	}
	return names
}

// mappingValue is the value of key in a mapping node, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
