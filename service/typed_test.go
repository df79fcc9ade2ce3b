package service_test

import (
	"testing"

	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
)

// TestTypedFollowsEdits: Typed answers the section in force, decoded, and
// a new one after every edit (its ETag is the map's).
func TestTypedFollowsEdits(t *testing.T) {
	st, err := inforce.Open(t.TempDir(), inforce.Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	pol := service.NewPolicy(st)

	before, etag, err := pol.Typed()
	if err != nil {
		t.Fatal(err)
	}
	if _, mapTag, _ := pol.Section(); etag != mapTag {
		t.Fatalf("got ETag %q, want the section's %q", etag, mapTag)
	}
	rule, _, _ := policy.DecodeRule(map[string]any{"tools": "bash", "pattern": "git status", "action": "ALLOW"}, "rule")
	id, newTag, err := pol.CreateRule(etag, rule)
	if err != nil {
		t.Fatal(err)
	}
	after, gotTag, err := pol.Typed()
	if err != nil {
		t.Fatal(err)
	}
	if gotTag != newTag {
		t.Errorf("got ETag %q after the edit, want %q", gotTag, newTag)
	}
	r, ok := policy.RuleByID(after.Rules, id)
	if !ok {
		t.Fatalf("rule %q missing after the edit; have %d rules (before %d)", id, len(after.Rules), len(before.Rules))
	}
	if r.Action != policy.Allow || len(r.Tools) != 1 || r.Tools[0] != "bash" {
		t.Errorf("got rule %+v, want action allow and tools [bash]", *r)
	}
	m, _, _ := pol.Section()
	got := policy.DecodeSection(m.Map())
	if len(got.Rules) != len(after.Rules) {
		t.Errorf("Typed has %d rules, the section map %d", len(after.Rules), len(got.Rules))
	}
}
