package web

import (
	"testing"

	"github.com/toolgate/toolgate/policy"
)

func TestRuleRowFromTypedRule(t *testing.T) {
	cases := []struct {
		note             string
		entry            map[string]any
		action, severity string
		tools            string
	}{
		{"level by name", map[string]any{"tools": []any{"bash", "shell"}, "pattern": "ls", "action": "ALLOW"}, "allow", "", "bash, shell"},
		{"bad action shown as written", map[string]any{"tools": "bash", "pattern": "ls", "action": "Maybe"}, "maybe", "", "bash"},
		{"severity upper-cased", map[string]any{"tools": "bash", "pattern": "ls", "severity": "low"}, "", "LOW", "bash"},
		{"unknown severity shown", map[string]any{"tools": "bash", "pattern": "ls", "severity": "urgent"}, "", "URGENT", "bash"},
	}
	for _, c := range cases {
		r, _, _ := policy.DecodeRule(c.entry, "rule")
		row := ruleRow(&r)
		if row.Action != c.action || row.Severity != c.severity || row.Tools != c.tools {
			t.Errorf("%s: got action %q severity %q tools %q, want %q %q %q", c.note, row.Action, row.Severity, row.Tools, c.action, c.severity, c.tools)
		}
	}
}

func TestToolRowsKnownFirstThenConfigured(t *testing.T) {
	sec := policy.DecodeSection(map[string]any{"tools": map[string]any{
		"bash": "DENY", "zz_tool": "allow", "aa_tool": map[string]any{"*": "ask"},
	}})
	rows := toolRows(sec.Tools)
	known := knownTools()
	if len(rows) != len(known)+2 {
		t.Fatalf("got %d rows, want %d", len(rows), len(known)+2)
	}
	byName := map[string]int{}
	for i, r := range rows {
		byName[r.Name] = i
	}
	if r := rows[byName["bash"]]; r.Level != "deny" || r.Legacy || byName["bash"] >= len(known) {
		t.Errorf("bash: got %+v at %d, want deny among the known tools", r, byName["bash"])
	}
	if rows[len(known)].Name != "aa_tool" || rows[len(known)+1].Name != "zz_tool" {
		t.Errorf("got extra rows %q, %q, want aa_tool, zz_tool", rows[len(known)].Name, rows[len(known)+1].Name)
	}
	if r := rows[len(known)]; !r.Legacy || r.Level != "ask" {
		t.Errorf("aa_tool: got %+v, want legacy ask", r)
	}
}
