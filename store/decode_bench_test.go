package store

import (
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/store/yamlsplit"
)

// BenchmarkDecodeSection compares the ways the store can read the
// permissions section of n rules (and n/10 overrides), in the store's own
// layout (every entry simple) and as flow mappings (every entry parsed by
// yaml.v3, in pieces on all cores):
//   - split: store/yamlsplit, what decodeSection tries first;
//   - nodes: the whole-file node parse the edits need, its long lists
//     decoded on all cores (decodedPermissions, the fallback);
//   - plain: the node parse and one yaml.v3 Decode;
//   - unmarshal: yaml.Unmarshal of the whole file into a map.
//
// The last three end in the same normalize and compaction.
//
//	go test ./store -run '^$' -bench DecodeSection -benchmem
func BenchmarkDecodeSection(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		for _, layout := range []string{"block", "flow"} {
			raw := []byte(benchConfig(n, layout))
			name := fmt.Sprintf("rules=%d/%s/", n, layout)
			b.Run(name+"split", func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					if _, ok := yamlsplit.Decode(raw, yamlsplit.Options{Finish: finishDecoded}); !ok {
						b.Fatal("the split decode refused")
					}
				}
			})
			b.Run(name+"nodes", func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					doc, err := parseConfig(raw)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := doc.decodedPermissions(); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"plain", func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					doc, err := parseConfig(raw)
					if err != nil {
						b.Fatal(err)
					}
					var out any
					if err := doc.permissions().Decode(&out); err != nil {
						b.Fatal(err)
					}
					finishDecoded(out)
				}
			})
			b.Run(name+"unmarshal", func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					var out struct{ Permissions any }
					if err := yaml.Unmarshal(raw, &out); err != nil {
						b.Fatal(err)
					}
					finishDecoded(out.Permissions)
				}
			})
		}
	}
}

// benchConfig writes n rules and n/10 overrides, each entry as a block
// mapping (one key a line, as the store writes) or a flow mapping.
func benchConfig(n int, layout string) string {
	var b strings.Builder
	b.WriteString("permissions:\n  enabled: true\n  tools: {bash: ask}\n  rules:\n")
	entry := func(id, tools, pattern, action string) {
		if layout == "flow" {
			fmt.Fprintf(&b, "    - {id: %s, tools: %s, pattern: %q, action: %s}\n", id, tools, pattern, action)
			return
		}
		fmt.Fprintf(&b, "    - id: %s\n      tools: %s\n      pattern: %q\n      action: %s\n", id, tools, pattern, action)
	}
	for i := range n {
		switch i % 4 {
		case 0, 1:
			entry(fmt.Sprintf("gen_%d", i), "[bash]", fmt.Sprintf("make task%d *", i), "ask")
		case 2:
			entry(fmt.Sprintf("gen_%d", i), "[bash]", fmt.Sprintf(`re:^(task%d|task%d-ci)\s+--target=\w+`, i, i), "deny")
		default:
			entry(fmt.Sprintf("gen_%d", i), "[read_file, write_file]", fmt.Sprintf("/srv/proj%d/**", i), "allow")
		}
	}
	b.WriteString("  approval_overrides:\n")
	for i := range n / 10 {
		entry(fmt.Sprintf("user_allow_%d", i), "[bash]", fmt.Sprintf("go test ./pkg%d/...", i), "allow")
	}
	return b.String()
}
