package pg

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestSchemaIsWhatDeployedDatabasesRan pins every step of the schema list
// (part, version, name and a SHA-256 of its SQL) to what databases already
// deployed recorded in schema_migrations and ran: a step edited in place
// would be skipped on them (Migrate checks only the name) and run on fresh
// ones, so the two would differ. A change is a new step, appended here.
// The digests are those of the lists before they moved into schema.go.
func TestSchemaIsWhatDeployedDatabasesRan(t *testing.T) {
	want := []struct {
		part    string
		version int
		name    string
		sql     string
	}{
		{"policy", 1, "policy_document", "418636dd610ba92589283477450097fcb2245af1a440cb880f80128ae2bd07d4"},
		{"auth", 1, "auth_tokens", "9c0d189de33f5bb7c65362d7d8e35b3e3a1de1456966d08da04d70b6ab005be1"},
		{"sessions", 1, "auth_sessions", "9772594dcaa96ee0a8fad944cd5402e19bce16608512ec2543c27dfab13df60f"},
		{"approvals", 1, "approval_asks", "4d0f81b581f36dd4c014795618a0b351895e76f63667d1828c310b5e9a2985ed"},
		{"history", 1, "approval history", "c9724b20f92b67153dd81a3ee10b53da549f7e7c1819423e932128cb582f9808"},
		{"history", 2, "approval cause", "9281b4d193d825f195f428279d9cec96c5507c56a9ffdc125e16230f4f84fe34"},
		{"history", 3, "approval agent and grant", "428e54462d7e5a187c89d95c03977ea6ad7dc9ed5c8c942b40d69f6bc6012939"},
		{"grants", 1, "grants", "5b92300a660568da9f01500264de519fb7457acd9e40146b6e7abc17d123f01d"},
		{"decisionlog", 1, "decision log", "be7caa7316534be3ce832fbbecb68c0ac0bafc864832ec15951b321aadef1cb4"},
		{"decisionlog", 2, "decision log shadow", "3b1a48e3c2772354dcc355339336a1ed895563853eb3fe55e27b559310edc51b"},
	}
	i := 0
	for _, p := range schema {
		for _, m := range p.steps {
			if i >= len(want) {
				t.Fatalf("step %s %d (%s) is not pinned: append it to this test", p.part, m.Version, m.Name)
			}
			w := want[i]
			sum := sha256.Sum256([]byte(m.SQL))
			if p.part != w.part || m.Version != w.version || m.Name != w.name || hex.EncodeToString(sum[:]) != w.sql {
				t.Errorf("step %d is %s %d %q (sql %x), want %s %d %q (sql %s)", i, p.part, m.Version, m.Name, sum[:4], w.part, w.version, w.name, w.sql[:8])
			}
			i++
		}
	}
	if i != len(want) {
		t.Errorf("%d steps, want %d", i, len(want))
	}
	for _, p := range schema {
		if err := checkList(p.part, Steps(p.part)); err != nil {
			t.Errorf("part %s: %v", p.part, err)
		}
	}
}
