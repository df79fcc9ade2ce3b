package engine

import "testing"

// BenchmarkEvaluatePersona compares a persona call with the same call on
// the ordinary path: an owner pattern allow (top-level values only), and a
// miss of deny patterns, which also reads the normalized command.
func BenchmarkEvaluatePersona(b *testing.B) {
	e, _ := compileYAML(b, personaPolicy, "")
	cases := []struct {
		name string
		req  *Request
	}{
		{"ordinary/git_status", shellCall("bash", "git status")},
		{"persona/pattern_allow", persona(shellCall("bash", "git status"), "feishu", "ou_123")},
		{"persona/deny_patterns_miss", persona(shellCall("bash", "make build"), "feishu", "ou_123")},
		{"persona/no_scope", persona(shellCall("bash", "make build"), "feishu", "ou_999")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.Evaluate(c.req)
			}
		})
	}
}
