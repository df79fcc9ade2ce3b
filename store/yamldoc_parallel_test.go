package store

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestDecodeSectionParallelSameAsDecode decodes long permissions lists in
// chunks and wants exactly what one whole-node Decode (then normalize and
// compact) gives; a section with an alias is left to Decode.
func TestDecodeSectionParallelSameAsDecode(t *testing.T) {
	var b strings.Builder
	b.WriteString("permissions:\n  enabled: true\n  tools: {bash: ask, 7: allow}\n  rules:\n")
	for i := range parallelItems + 123 {
		fmt.Fprintf(&b, "    - id: r%d\n      tools: [bash, %d]\n      pattern: %q\n      action: deny\n", i, i%3, fmt.Sprintf("re:^x%d\\s+", i))
		switch i % 5 {
		case 1:
			b.WriteString("      n: null\n      f: 1.5\n      ok: yes\n      on: true\n")
		case 2:
			b.WriteString("      <<: {merged: 1, id: other}\n      extra: {a: [1, {b: c}], 3: x}\n")
		case 3:
			b.WriteString("      when: 2024-01-02\n      note: !!str 12\n")
		}
	}
	b.WriteString("  approval_overrides:\n")
	for i := range parallelItems {
		fmt.Fprintf(&b, "    - {id: o%d, tools: [bash], pattern: 'go test ./p%d/...', action: allow}\n", i, i)
	}
	for _, tc := range []struct {
		note     string
		text     string
		parallel bool
	}{
		{note: "long lists", text: b.String(), parallel: true},
		{note: "alias", text: b.String() + "  x: &a {k: v}\n  y: *a\n", parallel: false},
		{note: "short lists", text: "permissions:\n  rules:\n    - {id: a, tools: [bash], pattern: x}\n", parallel: false},
	} {
		t.Run(tc.note, func(t *testing.T) {
			doc, err := parseConfig([]byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			v := doc.permissions()
			got, ok := decodeSectionParallel(v)
			if ok != tc.parallel {
				t.Fatalf("parallel = %v, want %v", ok, tc.parallel)
			}
			var want any
			if err := v.Decode(&want); err != nil {
				t.Fatal(err)
			}
			want = compactSection(normalize(want))
			if ok && !reflect.DeepEqual(got, want) {
				t.Fatalf("chunked decode differs from Decode")
			}
			if ok && sectionETag(got.(map[string]any)) != sectionETag(want.(map[string]any)) {
				t.Fatalf("ETag differs")
			}
		})
	}
}
