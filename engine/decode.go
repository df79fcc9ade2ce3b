package engine

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

// asList returns v as a list.
func asList(v any) ([]any, bool) {
	l, ok := v.([]any)
	return l, ok
}

// scalarString renders a scalar config value as a string; ok is false for
// maps, lists and nil.
func scalarString(v any) (string, bool) {
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

// sortedKeys returns the keys of m in order, so compilation is deterministic.
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

// quoteKey renders a map key for a problem path.
func quoteKey(k string) string {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return strconv.Quote(k)
		}
	}
	return k
}
