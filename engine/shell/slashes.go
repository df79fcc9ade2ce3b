package shell

import "strings"

// slashes replaces \ with /, allocating only when there is a \.
func slashes(v string) string {
	if strings.IndexByte(v, '\\') < 0 {
		return v
	}
	return strings.ReplaceAll(v, `\`, "/")
}
