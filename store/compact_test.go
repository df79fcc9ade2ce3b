package store

import (
	"reflect"
	"testing"
	"unsafe"

	"gopkg.in/yaml.v3"
)

// TestCompactSection: the compacted section equals the decoded one, and
// every string of it (keys and values, at any depth) lies in one backing
// array, repeated short strings at one place.
func TestCompactSection(t *testing.T) {
	const text = `
enabled: true
tools: {bash: ask, read_file: allow}
rules:
  - {id: a, tools: [bash], pattern: "git status *", action: allow}
  - {id: b, tools: [bash, mcp_exec_command], pattern: "re:^rm ", action: deny, n: 3}
  - {id: "", tools: [], pattern: "", extra: {deep: [x, {y: bash}]}}
`
	decode := func() any {
		var v any
		if err := yaml.Unmarshal([]byte(text), &v); err != nil {
			t.Fatal(err)
		}
		return normalize(v)
	}
	got, want := compactSection(decode()), decode()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("compacted:\n%#v\nwant:\n%#v", got, want)
	}
	var strs []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				strs = append(strs, k)
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			strs = append(strs, x)
		}
	}
	walk(got)
	lo, hi := uintptr(0), uintptr(0)
	where := map[string]uintptr{}
	for _, s := range strs {
		if s == "" {
			continue
		}
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		if q, ok := where[s]; ok && q != p {
			t.Errorf("%q is stored twice", s)
		}
		where[s] = p
		if lo == 0 || p < lo {
			lo = p
		}
		if end := p + uintptr(len(s)); end > hi {
			hi = end
		}
	}
	total := 0
	for s := range where {
		total += len(s)
	}
	if int(hi-lo) != total {
		t.Errorf("the %d distinct strings (%d bytes) span %d bytes: not one backing string", len(where), total, hi-lo)
	}
}
