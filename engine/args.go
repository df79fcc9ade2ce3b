package engine

import "strings"

// shellValue is the command of a shell tool call: tool_args.command, else
// tool_args.cmd, stripped (contract 3).
func shellValue(args map[string]any) string {
	if s, ok := args["command"].(string); ok {
		return strings.TrimSpace(s)
	}
	if s, ok := args["cmd"].(string); ok {
		return strings.TrimSpace(s)
	}
	return ""
}

// pathKeys are the argument names whose string values are always paths.
func isPathKey(k string) bool {
	switch k {
	case "path", "file_path", "target_file", "file", "old_path", "new_path",
		"source_path", "dest_path", "directory", "dir":
		return true
	}
	return false
}

// isPathValue reports whether a stripped, non-blank string under key k is a
// path value: a path key, or a value containing / or \, or whose second
// character is ':'.
func isPathValue(k, v string) bool {
	return isPathKey(k) || strings.ContainsAny(v, `/\`) || len(v) >= 2 && v[1] == ':'
}

// eachPathValue calls fn with every path value of the arguments; strings in
// lists count under their list's key. Order does not matter to matching (any
// one value is a hit), so map order is used. It stops when fn returns false.
func eachPathValue(args map[string]any, fn func(string) bool) {
	for k, v := range args {
		if !visitPathValue(k, v, fn) {
			return
		}
	}
}

func visitPathValue(k string, v any, fn func(string) bool) bool {
	switch s := v.(type) {
	case string:
		t := strings.TrimSpace(s)
		if t != "" && isPathValue(k, t) {
			return fn(t)
		}
	case []any:
		for _, item := range s {
			if str, ok := item.(string); ok {
				t := strings.TrimSpace(str)
				if t != "" && isPathValue(k, t) && !fn(t) {
					return false
				}
			}
		}
	}
	return true
}

// pathKeyOrder is the order in which "always allow" looks for the first path
// value: the path keys as the contract lists them, then any other key sorted.
var pathKeyOrder = []string{"path", "file_path", "target_file", "file", "old_path", "new_path",
	"source_path", "dest_path", "directory", "dir"}

// FirstPathValue returns the first path value of the arguments, as "always
// allow" records it (contract 3): the path keys in the contract's order,
// then the other keys in sorted order.
func FirstPathValue(args map[string]any) (string, bool) {
	var first string
	found := false
	take := func(v string) bool { first, found = v, true; return false }
	for _, k := range pathKeyOrder {
		if v, ok := args[k]; ok {
			visitPathValue(k, v, take)
			if found {
				return first, true
			}
		}
	}
	for _, k := range sortedKeys(args) {
		if isPathKey(k) {
			continue
		}
		visitPathValue(k, args[k], take)
		if found {
			return first, true
		}
	}
	return "", false
}

// ShellCommand returns the command of a shell tool call as the engine
// matches it.
func ShellCommand(args map[string]any) string { return shellValue(args) }
