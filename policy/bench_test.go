package policy

import (
	"fmt"
	"testing"
)

// BenchmarkDecodeSection: the cost of the typed decoding that compiling
// now starts with, for n user rules of the shape "always allow" writes.
func BenchmarkDecodeSection(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		rules := make([]any, n)
		for i := range rules {
			rules[i] = map[string]any{"id": fmt.Sprintf("user_allow_bash_command_make_build%d", i), "tools": []any{"bash"},
				"match_type": "command", "pattern": fmt.Sprintf("make build%d", i), "action": "allow", "source": SourceUserApproval}
		}
		perms := map[string]any{"enabled": true, "schema": "tiered_policy", "approval_overrides": rules,
			"tools": map[string]any{"bash": "ask"}, "defaults": map[string]any{"*": "ask"}}
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if s := DecodeSection(perms); len(s.Overrides) != n {
					b.Fatalf("got %d overrides", len(s.Overrides))
				}
			}
		})
	}
}
