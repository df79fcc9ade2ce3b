package redact

// copyObject copies an object of tool arguments, each value through f and,
// when key is not nil, each key through key. The redaction walks (Args,
// ShownArgs, ClipArgs) copy, so that the call they were given stays as sent.
func copyObject(m map[string]any, key func(string) string, f func(any) any) map[string]any {
	out := make(map[string]any, len(m))
	for k, x := range m {
		if key != nil {
			k = key(k)
		}
		out[k] = f(x)
	}
	return out
}

// copyList copies a list of argument values, each through f.
func copyList(l []any, f func(any) any) []any {
	out := make([]any, len(l))
	for i, x := range l {
		out[i] = f(x)
	}
	return out
}

// stringKeyed is an object decoded from YAML (map[any]any) as a JSON
// object: its string keys and their values; other keys cannot be written
// as JSON and are left out.
func stringKeyed(m map[any]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, x := range m {
		if ks, ok := k.(string); ok {
			out[ks] = x
		}
	}
	return out
}
