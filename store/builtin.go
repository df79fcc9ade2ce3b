package store

// packageRules decodes Options.PackageRules, the package default rules.
func (s *Store) packageRules() []any { return decodePackageRules(s.opts.PackageRules) }

// decodePackageRules decodes a package default rule text (nil: no rules);
// the default the server is given is tested to parse.
func decodePackageRules(raw []byte) []any {
	if raw == nil {
		return []any{}
	}
	rules, err := decodeRuleList(raw)
	if err != nil {
		return []any{}
	}
	return rules
}
