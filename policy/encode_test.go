package policy

import (
	"slices"
	"testing"
)

func TestKeyRank(t *testing.T) {
	keys := []string{"source", "zeta", "action", "*", "pattern", "tools", "id", "alpha", "match_type", "severity", "description"}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := KeyRank(a), KeyRank(b); ra != rb {
			return ra - rb
		}
		if a < b {
			return -1
		}
		return 1
	})
	want := []string{"*", "id", "tools", "match_type", "pattern", "action", "severity", "description", "source", "alpha", "zeta"}
	if !slices.Equal(keys, want) {
		t.Errorf("got %v, want %v", keys, want)
	}
	for k := range knownKeys {
		if KeyRank(k) == 100 {
			t.Errorf("section key %s has no place", k)
		}
	}
	for _, k := range RuleFields {
		if KeyRank(k) == 100 {
			t.Errorf("rule key %s has no place", k)
		}
	}
}

// TestRuleMap: Map writes what config.yaml holds and DecodeRule reads it
// back to the same rule.
func TestRuleMap(t *testing.T) {
	cases := []struct {
		note string
		rule Rule
	}{
		{"action rule", Rule{ID: "r1", Tools: []string{"bash"}, Pattern: "rm *", Action: Deny, MatchType: MatchCommand}},
		{"severity rule", Rule{ID: "r2", Tools: []string{"read_file", "grep"}, Pattern: "/etc/*", Severity: SeverityCritical, Description: "etc"}},
		{"inert rule keeps its action text", Rule{ID: "r3", Tools: []string{"bash"}, Pattern: "x", BadAction: "block"}},
		{"unknown severity kept", Rule{ID: "r4", Tools: []string{"bash"}, Pattern: "x", Severity: SeverityHigh, BadSeverity: "huge"}},
		{"extra keys kept", Rule{ID: "o1", Tools: []string{"bash"}, Pattern: "ls", Action: Allow, Source: SourceUserApproval,
			Extra: map[string]any{"approved_by": "ann", "created_at": "2026-01-01T00:00:00Z"}}},
	}
	for _, c := range cases {
		got, _, ok := DecodeRule(c.rule.Map(), "r")
		if !ok || !equalRule(got, c.rule) {
			t.Errorf("%s: got %#v, want %#v", c.note, got, c.rule)
		}
	}
}

func equalRule(a, b Rule) bool {
	am, bm := a.Map(), b.Map()
	if len(am) != len(bm) {
		return false
	}
	for k, v := range am {
		if bv, ok := bm[k]; !ok || !sameValue(v, bv) {
			return false
		}
	}
	return a.Action == b.Action && a.Severity == b.Severity && slices.Equal(a.Tools, b.Tools)
}

func sameValue(a, b any) bool {
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok || bok {
		return aok && bok && slices.Equal(al, bl)
	}
	return a == b
}
