package engine_test

import (
	"testing"

	"github.com/toolgate/toolgate/engine"
)

// BenchmarkShadowRules: what shadow rules cost. Evaluate on a policy whose
// ten extra rules are in shadow mode against the same policy without them
// (the call's cost must not change: the engine that decides is compiled
// without them), and ShadowOf, the decision log writer's extra work per
// logged call, off the request path.
func BenchmarkShadowRules(b *testing.B) {
	base := []any{
		map[string]any{"id": "allow_status", "tools": []any{"bash"}, "pattern": "git status *", "action": "allow"},
		map[string]any{"id": "ask_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "ask"},
	}
	withShadow := append([]any(nil), base...)
	for _, p := range []string{"npm run *", "make *", "go test *", "cargo build *", "docker run *",
		"kubectl apply *", "terraform apply *", "git push --force *", "rm -rf *", "curl *"} {
		withShadow = append(withShadow, map[string]any{"id": "try_" + p[:3], "tools": []any{"bash"}, "pattern": p, "action": "deny", "mode": "shadow"})
	}
	compile := func(rules []any) *engine.Engine {
		e, problems := engine.Compile(map[string]any{"schema": "tiered_policy", "tools": map[string]any{"bash": "ask"}, "rules": rules},
			nil, engine.Options{Workspace: "/ws/project", HomeDir: "/home/u"})
		if len(problems) > 0 {
			b.Fatal(problems)
		}
		return e
	}
	plain, shadowed := compile(base), compile(withShadow)
	req := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "npm run build --silent"})}
	if plain.Evaluate(req).Level != shadowed.Evaluate(req).Level || !shadowed.ShadowOf(req, shadowed.Evaluate(req)).Changed {
		b.Fatal("the shadow rule should change this call, and only in the shadow")
	}
	for _, c := range []struct {
		name string
		run  func()
	}{
		{"evaluate/no_shadow_rules", func() { plain.Evaluate(req) }},
		{"evaluate/ten_shadow_rules", func() { shadowed.Evaluate(req) }},
		{"writer/shadow_of", func() { d := shadowed.Evaluate(req); _ = shadowed.ShadowOf(req, d) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.run()
			}
		})
	}
}
