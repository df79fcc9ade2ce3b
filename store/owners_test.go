package store

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// TestOwnerScopesShape: a config.yaml with owner scopes in toolgate's
// earlier shape keeps them (nothing is dropped), is reported with the fix,
// and denies that principal's persona calls; the JiuwenSwarm shape decides.
func TestOwnerScopesShape(t *testing.T) {
	s, dir := openFixture(t, "")
	writeFile(t, filepath.Join(dir, ConfigFile), []byte(`permissions:
  schema: tiered_policy
  tools: {bash: allow}
  owner_scopes:
    ou_old:
      tools: {bash: deny}
    feishu:
      ou_123:
        tools:
          bash: {patterns: {"git *": allow}, "*": deny}
`))
	if err := s.Reload(); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	found := false
	for _, p := range s.Problems() {
		if p.Path == "permissions.owner_scopes.ou_old" && strings.Contains(p.Message, "move it under a channel, e.g. owner_scopes.feishu.ou_old") {
			found = true
		}
	}
	if !found {
		t.Errorf("problems: got %v, want the earlier shape reported with the fix", s.Problems())
	}
	sec, _, err := s.Section()
	if err != nil {
		t.Fatal(err)
	}
	if _, kept := sec["owner_scopes"].(map[string]any)["ou_old"]; !kept {
		t.Errorf("the earlier-shape entry was dropped from the section")
	}
	call := func(principal, cmd string) engine.Decision {
		return inForce(s).Evaluate(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": cmd}), ChannelID: "feishu",
			Scope: &engine.Scope{AvatarMode: true, GroupDigitalAvatar: true, PrincipalUserID: principal}})
	}
	cases := []struct {
		note, principal, cmd string
		level                policy.Level
		rule                 string
	}{
		{"the earlier shape denies its principal", "ou_old", "git status", policy.Deny, "owner_scopes.ou_old"},
		{"an owner pattern allows", "ou_123", "git status", policy.Allow, "owner_scopes.feishu.ou_123.tools.bash.patterns['git *']"},
		{"the tool's * denies", "ou_123", "make", policy.Deny, "owner_scopes.feishu.ou_123.tools.bash.*"},
	}
	for _, c := range cases {
		if d := call(c.principal, c.cmd); d.Level != c.level || d.MatchedRule != c.rule {
			t.Errorf("%s: got %s %q, want %s %q", c.note, d.Level, d.MatchedRule, c.level, c.rule)
		}
	}

	// The typed owner scopes cannot hold the earlier shape (the door refuses
	// it, policy.DecodeOwnerScopesInput); a whole section still can.
	sec, tag, err := s.Section()
	if err != nil {
		t.Fatal(err)
	}
	sec["owner_scopes"] = map[string]any{"ou_new": map[string]any{"tools": map[string]any{"bash": "deny"}}}
	_, err = s.IfMatch(tag).ReplaceSection(policy.WrittenOf(sec))
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(ve.Error(), "move it under a channel, e.g. owner_scopes.feishu.ou_new") {
		t.Errorf("setting the earlier shape: got %v, want a validation error with the fix", err)
	}
}
