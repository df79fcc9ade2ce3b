package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// ErrNotObject is a permissions body or node that is not a mapping.
var ErrNotObject = errors.New("policy: the permissions section must be an object")

// Validate returns every problem of a decoded permissions section that the
// section's own shape shows (types, levels, severities, match types,
// owner-scope shape, unknown keys), each naming its field path
// (permissions.rules[3].action). What needs the
// engine (patterns that do not compile, unknown tools, duplicate ids, rules
// for network tools) is added by engine.CompileSection, which returns
// these problems first.
func Validate(perms map[string]any) []Problem { return DecodeSection(perms).Problems }

// DecodeJSON reads a permissions section from a JSON body (PUT
// /permissions, validate). A body that is not JSON, or not an object, is
// an error; everything else decodes leniently as DecodeSection does.
func DecodeJSON(body []byte) (Section, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return Section{}, ErrNotObject
		}
		return Section{}, fmt.Errorf("policy: %w", err)
	}
	if m == nil {
		return Section{}, ErrNotObject
	}
	return DecodeSection(m), nil
}

// DecodeNode reads a permissions section from its yaml.v3 node (the value
// of `permissions:` in config.yaml, as store edits it). A nil node or a
// null is the absent section; a node that is not a mapping is
// ErrNotObject.
func DecodeNode(n *yaml.Node) (Section, error) {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return DecodeSection(nil), nil
	}
	if n.Kind != yaml.MappingNode {
		return Section{}, ErrNotObject
	}
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		return Section{}, fmt.Errorf("policy: %w", err)
	}
	return DecodeSection(m), nil
}

// MarshalJSON writes the section in config.yaml's shape (Map), so the API
// answers what the file holds.
func (s Section) MarshalJSON() ([]byte, error) { return json.Marshal(s.Map()) }

// UnmarshalJSON reads a section as DecodeJSON does; its problems are in
// Problems, not errors.
func (s *Section) UnmarshalJSON(b []byte) error {
	sec, err := DecodeJSON(b)
	if err != nil {
		return err
	}
	*s = sec
	return nil
}

// MarshalJSON writes the rule in config.yaml's shape (Map).
func (r Rule) MarshalJSON() ([]byte, error) { return marshalValue(r.Map()) }

// UnmarshalJSON reads a rule in config.yaml's shape, as DecodeRule does
// (keys it does not know are kept in Extra, so that MarshalJSON writes them
// back); a rule with problems still reads, as it would in config.yaml, and
// only a value that is not an object is an error.
func (r *Rule) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	rule, _, ok := DecodeRule(v, "")
	if !ok {
		return errors.New("policy: a rule must be a JSON object")
	}
	*r = rule
	return nil
}
