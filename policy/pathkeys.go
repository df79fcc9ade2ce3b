package policy

import "strings"

// PathKeys are the tool-argument names whose string values are always
// paths, in the order the contract lists them (docs/decisions.md). "Always allow"
// looks for the first path value in this order, then in the other keys
// sorted.
var PathKeys = [...]string{"path", "file_path", "target_file", "file", "old_path", "new_path",
	"source_path", "dest_path", "directory", "dir"}

// IsPathKey reports whether k is one of PathKeys.
func IsPathKey(k string) bool {
	switch k {
	case "path", "file_path", "target_file", "file", "old_path", "new_path",
		"source_path", "dest_path", "directory", "dir":
		return true
	}
	return false
}

// IsPathValue reports whether a stripped, non-blank string under key k is a
// path value: a path key, or a value containing / or \, or whose second
// character is ':'.
func IsPathValue(k, v string) bool {
	return IsPathKey(k) || strings.ContainsAny(v, `/\`) || len(v) >= 2 && v[1] == ':'
}
