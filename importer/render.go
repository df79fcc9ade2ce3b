package importer

import (
	"bytes"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Section is the permissions section the import would write, as it is
// shaped in config.yaml: tools, defaults and rules (only the parts the
// source sets).
type Section struct {
	Tools    map[string]string `yaml:"tools,omitempty"`
	Defaults map[string]string `yaml:"defaults,omitempty"`
	Rules    []Rule            `yaml:"rules,omitempty"`
}

// Section returns what the import would write.
func (r *Result) Section() Section {
	s := Section{Rules: r.Rules}
	if len(r.Tools) > 0 {
		s.Tools = r.Tools
	}
	if r.Defaults != "" {
		s.Defaults = map[string]string{"*": r.Defaults}
	}
	return s
}

// YAML renders the section under a permissions: key, as config.yaml holds
// it. A rule's examples (Codex's match and not_match) are comments above
// it: toolgate's rules have no field for them yet.
func (r *Result) YAML() (string, error) {
	var doc yaml.Node
	if err := doc.Encode(map[string]Section{"permissions": r.Section()}); err != nil {
		return "", err
	}
	if rules := findKey(findKey(&doc, "permissions"), "rules"); rules != nil {
		for i, n := range rules.Content {
			n.HeadComment = examplesComment(r.Rules[i])
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", err
	}
	return b.String(), nil
}

// examplesComment lists a rule's examples, "" when it has none.
func examplesComment(r Rule) string {
	var lines []string
	for _, e := range r.Match {
		lines = append(lines, "example, must match: "+e)
	}
	for _, e := range r.NoMatch {
		lines = append(lines, "example, must not match: "+e)
	}
	return strings.Join(lines, "\n")
}

// findKey is the value of key in a mapping node (the document's root
// mapping when n is a document).
func findKey(n *yaml.Node, key string) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// Report lists what was not carried over and what was left out, one
// entry a line, for a person.
func (r *Result) Report() string {
	var b strings.Builder
	for _, p := range r.Problems {
		if p.Stricter {
			fmt.Fprintf(&b, "stricter in toolgate: %s\n    %s\n", p.Entry, p.Reason)
		} else {
			fmt.Fprintf(&b, "not carried over: %s\n    %s\n", p.Entry, p.Reason)
		}
	}
	for _, p := range r.Dropped {
		fmt.Fprintf(&b, "left out (never decides in %s): %s\n    %s\n", r.Agent, p.Entry, p.Reason)
	}
	return b.String()
}
