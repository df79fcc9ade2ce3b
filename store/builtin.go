package store

import "github.com/toolgate/toolgate/engine/builtin"

// packageRules decodes the embedded default; it is tested to parse.
func packageRules() []any {
	rules, err := decodeRuleList(builtin.Default)
	if err != nil {
		return []any{}
	}
	return rules
}
