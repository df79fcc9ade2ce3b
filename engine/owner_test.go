package engine

import "testing"

// TestOwnerScopes covers the digital-persona scene (spec 1, contract D3).
func TestOwnerScopes(t *testing.T) {
	persona := func(req *Request, pid string) *Request {
		req.Scope = &Scope{AvatarMode: true, PrincipalUserID: pid}
		return req
	}
	e, _ := compileYAML(t, `schema: tiered_policy
defaults: {"*": ask}
tools: {read_file: allow, bash: allow}
deny_guidance_message: "Ask the owner to do this in person."
owner_scopes:
  u1:
    tools: {bash: deny}
    defaults: {"*": allow}
external_directory: allow`, "")
	runDecisionCases(t, e, []decisionCase{
		{"owner scope deny is merged strictest", persona(shellCall("bash", "ls"), "u1"), Deny, "tools.bash|owner_scopes[u1].tools.bash"},
		{"a looser owner scope does not loosen", persona(pathCall("edit_file", "a"), "u1"), Deny, "tiered_policy:defaults.*|owner_scopes:ask_to_deny"},
		{"allowed stays allowed", persona(pathCall("read_file", "a"), "u1"), Allow, "tools.read_file"},
		{"no owner scope for the principal: ask becomes deny", persona(pathCall("edit_file", "a"), "u2"), Deny, "tiered_policy:defaults.*|owner_scopes:ask_to_deny"},
		{"no principal: everything is denied", persona(pathCall("read_file", "a"), ""), Deny, "owner_scopes:no_principal"},
		{"not a persona call", pathCall("edit_file", "a"), Ask, "tiered_policy:defaults.*"},
	})
	d := e.Evaluate(persona(pathCall("edit_file", "a"), "u1"))
	if d.Reason != "Ask the owner to do this in person." {
		t.Errorf("reason: got %q, want the deny_guidance_message", d.Reason)
	}
	group := pathCall("edit_file", "a")
	group.Scope = &Scope{GroupDigitalAvatar: true, PrincipalUserID: "u1"}
	if got := e.Evaluate(group); got.Level != Deny {
		t.Errorf("group digital avatar: got %s, want deny", got.Level)
	}
	plain, _ := compileYAML(t, "schema: tiered_policy\ndefaults: {\"*\": ask}", "")
	if got := plain.Evaluate(persona(pathCall("edit_file", "a"), "u1")); got.Level != Deny {
		t.Errorf("no owner_scopes configured: got %s, want deny (D3)", got.Level)
	}
}

// TestExplainTrace: explain lists the steps and marks one as decisive.
func TestExplainTrace(t *testing.T) {
	e, _ := compileYAML(t, tieredPolicy, tieredBuiltin)
	req := shellCall("bash", "npm install x && cat /etc/hosts")
	req.Explain = true
	d := e.Evaluate(req)
	decisive := 0
	names := map[string]bool{}
	for _, s := range d.Trace {
		names[s.Name] = true
		if s.Decisive {
			decisive++
		}
	}
	if decisive != 1 {
		t.Errorf("decisive steps: got %d, want 1 (%+v)", decisive, d.Trace)
	}
	for _, want := range []string{"baseline", "builtin_hits", "user_hits", "approval_overrides", "finalize", "shell"} {
		if !names[want] {
			t.Errorf("trace lacks step %q: %+v", want, d.Trace)
		}
	}
	req.Explain = false
	if d := e.Evaluate(req); d.Trace != nil {
		t.Errorf("no explain: got a trace")
	}
}
