package policy

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// asMap returns v as a string-keyed map, accepting the map[any]any some YAML
// decoders produce.
func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, val := range m {
			out[fmt.Sprint(k)] = val
		}
		return out, true
	}
	return nil, false
}

// ScalarString renders a scalar config value as a string; ok is false for
// maps, lists and nil. `version: 4.2` reads as "4.2", `id: 7` as "7".
func ScalarString(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case bool:
		return strconv.FormatBool(s), true
	case int:
		return strconv.Itoa(s), true
	case int64:
		return strconv.FormatInt(s, 10), true
	case uint64:
		return strconv.FormatUint(s, 10), true
	case float64:
		return strconv.FormatFloat(s, 'g', -1, 64), true
	}
	return "", false
}

// sortedKeys returns the keys of m in order, so decoding is deterministic.
func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// truthy reads the enabled switch: false, "false", "no", "off", "0" disable;
// anything else (including absence) enables.
func truthy(v any, def bool) bool {
	switch b := v.(type) {
	case nil:
		return def
	case bool:
		return b
	case string:
		switch strings.ToLower(strings.TrimSpace(b)) {
		case "false", "no", "off", "0":
			return false
		}
		return true
	case int:
		return b != 0
	case float64:
		return b != 0
	}
	return def
}

// QuoteKey renders a map key for a problem path: as it is when it is made
// of letters, digits and _, else Go-quoted.
func QuoteKey(k string) string {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return strconv.Quote(k)
		}
	}
	return k
}

// QuotePattern renders a pattern key of owner_scopes for a problem path.
func QuotePattern(p string) string { return `"` + strings.ReplaceAll(p, `"`, `\"`) + `"` }

// Describe renders a config value for a problem message.
func Describe(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	if v == nil {
		return "(empty)"
	}
	return fmt.Sprintf("%v", v)
}

// tieredSchemas are the schema names that select the tiered policy.
var tieredSchemas = map[string]bool{"tiered_policy": true, "v_cc": true, "v4.2": true}

// IsTieredSchema reports whether a schema (or version) value selects the
// tiered policy: lower-cased, spaces removed, one of tiered_policy, v_cc, v4.2.
func IsTieredSchema(v any) bool {
	s, ok := ScalarString(v)
	if !ok {
		return false
	}
	s = strings.ToLower(strings.Join(strings.Fields(s), ""))
	return tieredSchemas[s]
}

// Paths of the section's parts, as problems name them.
const (
	PathSection   = "permissions"
	PathRules     = "permissions.rules"
	PathOverrides = "permissions.approval_overrides"
	PathBuiltin   = "builtin_rules"
	PathExternal  = "permissions.external_directory"
	PathOwners    = "permissions.owner_scopes"
)

// ItemPath is the path of entry i of a list: list[i].
func ItemPath(list string, i int) string { return list + "[" + strconv.Itoa(i) + "]" }

// ToolPath is the path of permissions.tools.<name>.
func ToolPath(name string) string { return "permissions.tools." + QuoteKey(name) }

// LegacyPatternPath is the path of permissions.tools.<tool>.patterns[<pat>].
func LegacyPatternPath(tool, pat string) string {
	return ToolPath(tool) + ".patterns[" + strconv.Quote(pat) + "]"
}

// ExternalKeyPath is the path of permissions.external_directory[<key>].
func ExternalKeyPath(key string) string { return PathExternal + "[" + QuoteKey(key) + "]" }

// OwnerScopePath is the path of permissions.owner_scopes.<channel>.<principal>.
func OwnerScopePath(channel, principal string) string {
	return PathOwners + "." + QuoteKey(channel) + "." + QuoteKey(principal)
}

// OwnerToolPath is the path of owner_scopes.<channel>.<principal>.tools.<tool>.
func OwnerToolPath(channel, principal, tool string) string {
	return OwnerScopePath(channel, principal) + ".tools." + QuoteKey(tool)
}

// OwnerPatternPath is the path of one patterns entry of an owner tool.
func OwnerPatternPath(channel, principal, tool, pat string) string {
	return OwnerToolPath(channel, principal, tool) + ".patterns[" + QuotePattern(pat) + "]"
}

// keyRanks is the order in which the keys of a new rule, override or
// section are written: a rule's id, tools, match type and pattern first,
// then its level; a section's switches before its lists.
var keyRanks = map[string]int{
	"id": 0, "tools": 1, "match_type": 2, "pattern": 3, "action": 4, "severity": 5, "description": 6, "source": 7, "mode": 8, "examples": 9, "match": 9, "no_match": 10,
	"enabled": 10, "schema": 11, "version": 12, "permission_mode": 13, "defaults": 14,
	"rules": 16, "approval_overrides": 17, "external_directory": 18, "owner_scopes": 19, "deny_guidance_message": 20,
}

// KeyRank is the place of a key when a new entry is written: "*" first,
// then the keys of rules and sections in the order people read them, then
// any other key (100; ties sort alphabetically).
func KeyRank(k string) int {
	if k == "*" {
		return -1
	}
	if r, ok := keyRanks[k]; ok {
		return r
	}
	return 100
}
