package engine_test

import (
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// TestShadowRules: a shadow rule never decides a call; the shadow engine
// decides as if it were enforced, and ShadowOf says which calls it would
// change. A shadow rule is validated as if enforced.
func TestShadowRules(t *testing.T) {
	perms := map[string]any{"schema": "tiered_policy", "tools": map[string]any{"bash": "ask"}, "rules": []any{
		map[string]any{"id": "allow_status", "tools": []any{"bash"}, "pattern": "git status *", "action": "allow"},
		map[string]any{"id": "deny_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "deny", "mode": "shadow"},
		map[string]any{"id": "allow_build", "tools": []any{"bash"}, "pattern": "make *", "action": "allow", "mode": "SHADOW"},
	}}
	e, problems := engine.Compile(perms, nil, engine.Options{Workspace: "/ws"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if e.Shadow() == nil {
		t.Fatal("no shadow engine for a policy with shadow rules")
	}
	for _, c := range []struct {
		note, cmd          string
		level, shadowLevel policy.Level
		shadowRule         string
		changed            bool
	}{
		{"a shadow deny does not deny", "git push origin main", policy.Ask, policy.Deny, "tiered_policy:rules:deny:rules[deny_push]", true},
		{"a shadow allow does not allow", "make build", policy.Ask, policy.Allow, "tiered_policy:rules:rules[allow_build]", true},
		{"an enforced rule decides as before", "git status", policy.Allow, policy.Allow, "tiered_policy:rules:rules[allow_status]", false},
		{"a call no rule meets", "ls", policy.Ask, policy.Ask, "tools.bash", false},
	} {
		req := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": c.cmd})}
		d := e.Evaluate(req)
		s := e.ShadowOf(req, d)
		if d.Level != c.level || s.Level != c.shadowLevel || s.MatchedRule != c.shadowRule || s.Changed != c.changed {
			t.Errorf("%s: in force %v (%s), shadow %+v; want %v, shadow %v by %s changed %v",
				c.note, d.Level, d.MatchedRule, s, c.level, c.shadowLevel, c.shadowRule, c.changed)
		}
	}
	// An approval override in shadow mode allows nothing yet.
	watched, _ := engine.Compile(map[string]any{"schema": "tiered_policy", "tools": map[string]any{"bash": "ask"},
		"approval_overrides": []any{map[string]any{"id": "o1", "tools": []any{"bash"}, "pattern": "make release", "action": "allow", "mode": "shadow"}}},
		nil, engine.Options{Workspace: "/ws"})
	release := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make release"})}
	if d := watched.Evaluate(release); d.Level != policy.Ask || !watched.ShadowOf(release, d).Changed {
		t.Errorf("a shadow override: in force %v (%s), want ask, and allow only in the shadow", d.Level, d.MatchedRule)
	}
	plain, _ := engine.Compile(map[string]any{"schema": "tiered_policy"}, nil, engine.Options{})
	if plain.Shadow() != nil || plain.ShadowOf(&engine.Request{Call: engine.NewCall("bash", nil)}, engine.Decision{}).Changed {
		t.Error("a policy without shadow rules has a shadow")
	}
	perms["rules"] = append(perms["rules"].([]any), map[string]any{"id": "bad", "tools": []any{"bash"}, "pattern": "re:(", "action": "deny", "mode": "shadow"},
		map[string]any{"id": "typo", "tools": []any{"bash"}, "pattern": "rm *", "action": "deny", "mode": "shadw"})
	e, problems = engine.Compile(perms, nil, engine.Options{Workspace: "/ws"})
	var paths []string
	for _, p := range problems {
		paths = append(paths, p.Path)
	}
	if len(problems) != 2 || paths[0] != "permissions.rules[3].pattern" || paths[1] != "permissions.rules[4].mode" {
		t.Errorf("problems %v, want the shadow rule's pattern and the unknown mode", problems)
	}
	if d := e.Evaluate(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "rm x"})}); d.Level != policy.Deny {
		t.Errorf("a rule with an unknown mode is not enforced: %v", d.Level)
	}
}
