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
// it.
func (r *Result) YAML() (string, error) {
	var doc yaml.Node
	if err := doc.Encode(map[string]Section{"permissions": r.Section()}); err != nil {
		return "", err
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", err
	}
	return b.String(), nil
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
