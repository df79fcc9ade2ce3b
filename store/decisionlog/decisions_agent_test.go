package decisionlog

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store/sqlite"
)

// TestDecisionLogAgentMigration opens a decision log written before the
// agent column existed: its rows read as rest, and new rows keep their agent.
func TestDecisionLogAgentMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.db")
	var before []sqlite.Migration
	for _, m := range migrations {
		if m.Version < 3 {
			before = append(before, m)
		}
	}
	old, err := sqlite.Open(path, before)
	if err != nil {
		t.Fatalf("migration 2: %v", err)
	}
	if _, err := old.SQL().Exec(`INSERT INTO decisions (ts, source, tool, summary, session, level)
		VALUES (?, 'check', 'bash', 'make', 's-old', 'ask')`, time.Now().UnixMicro()); err != nil {
		t.Fatalf("old-schema insert: %v", err)
	}
	old.Close()

	db, err := sqlite.Open(path, migrations)
	if err != nil {
		t.Fatalf("reopen with every migration: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if v, err := db.SchemaVersion(context.Background()); err != nil || v < 3 {
		t.Errorf("schema version: got %d (err %v), want at least 3", v, err)
	}
	l := newLog(db, Options{})
	t.Cleanup(func() { l.Close() })
	l.Enqueue(Entry{Source: "check", Agent: "codex", Tool: "bash", Summary: "ls", Session: "s-new", Level: "allow"})
	l.Enqueue(Entry{Source: "evaluate", Tool: "read_file", Summary: "x", Level: "allow"}) // no agent: rest
	flush(t, l)

	tests := []struct {
		note     string
		q        Query
		sessions []string
	}{
		{"old row reads as rest, with the new one without agent", Query{Agent: "rest"}, []string{"", "s-old"}},
		{"by agent", Query{Agent: "codex"}, []string{"s-new"}},
		{"agent and session together", Query{Agent: "codex", Session: "s-old"}, nil},
		{"an agent with no rows", Query{Agent: "gemini"}, nil},
	}
	for _, tc := range tests {
		page, err := l.Query(context.Background(), tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.note, err)
		}
		var got []string
		for _, e := range page.Entries {
			got = append(got, e.Session)
			if tc.q.Agent != "" && e.Agent != tc.q.Agent {
				t.Errorf("%s: entry %d has agent %q", tc.note, e.ID, e.Agent)
			}
		}
		if len(got) != len(tc.sessions) || (len(got) > 0 && (got[0] != tc.sessions[0] || got[len(got)-1] != tc.sessions[len(tc.sessions)-1])) {
			t.Errorf("%s: sessions %q, want %q", tc.note, got, tc.sessions)
		}
	}
}
