package store

import "fmt"

// packageRules decodes Options.PackageRules, the package default rules;
// OpenBackend refused a text that does not parse.
func (s *Store) packageRules() []any {
	rules, _ := decodePackageRules(s.opts.PackageRules)
	return rules
}

// decodePackageRules decodes a package default rule text (nil: no rules).
// A text that does not parse is an error, never "no rules": the package
// default holds the built-in deny rules, and losing them silently would
// loosen every decision they make.
func decodePackageRules(raw []byte) ([]any, error) {
	if raw == nil {
		return []any{}, nil
	}
	rules, err := decodeRuleList(raw)
	if err != nil {
		return nil, fmt.Errorf("store: the package default built-in rules do not parse: %w", err)
	}
	return rules, nil
}
