package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestShadowExamplesImportOnPostgres runs shadow rules, rule examples and
// `toolgate import` against two replicas sharing one PostgreSQL database:
// a shadow rule written through one replica decides nothing on the other,
// whose calls the shared decision log lists as the rule would have
// decided them; enforcing it through the second replica makes the first
// deny; a rule whose example fails is refused naming the example; and the
// real CLI's import written through one replica decides on the other.
func TestShadowExamplesImportOnPostgres(t *testing.T) {
	rs := startReplicas(t, pgtest.Shared(t), 2, nil)
	one, two := rs.r[0], rs.r[1]
	level := func(s *Server, cmd string) string {
		st, raw := s.Do("POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": cmd}})
		if st != 200 {
			t.Fatalf("evaluate %q: %d %s", cmd, st, raw)
		}
		return DecodeJSON[map[string]any](t, raw)["level"].(string)
	}
	sees := func(s *Server, id string) bool {
		st, _ := s.Do("GET", "/api/v1/permissions/rules/"+id, nil)
		return st == 200
	}

	// A rule whose example does not match is refused, and nothing is written.
	st, raw := one.Do("POST", "/api/v1/permissions/rules", map[string]any{"id": "builds", "tools": []string{"bash"},
		"pattern": "make *", "action": "allow", "examples": map[string]any{"match": []string{"cmake build"}}})
	if st != 400 || !strings.Contains(string(raw), "examples.match[0]") {
		t.Fatalf("a failing example: %d %s, want 400 naming examples.match[0]", st, raw)
	}
	if sees(one, "builds") {
		t.Fatal("the refused rule was written")
	}

	// A shadow rule with examples that hold: written through one, read by two.
	st, raw = one.Do("POST", "/api/v1/permissions/rules", map[string]any{"id": "no_push", "tools": []string{"bash"},
		"pattern": "git push *", "action": "deny", "mode": "shadow",
		"examples": map[string]any{"match": []string{"git push origin main"}, "no_match": []string{"git pull"}}})
	if st != 201 {
		t.Fatalf("create the shadow rule: %d %s", st, raw)
	}
	WaitFor(t, 10*time.Second, "replica two to read the shadow rule", func() bool { return sees(two, "no_push") })
	if got := level(two, "git push origin main"); got != "ask" {
		t.Fatalf("replica two decides %s for git push; a shadow rule must decide nothing (bash asks)", got)
	}
	type shadowCall struct {
		RuleID      string `json:"rule_id"`
		Summary     string `json:"summary"`
		Level       string `json:"level"`
		ShadowLevel string `json:"shadow_level"`
	}
	var calls []shadowCall
	WaitFor(t, 10*time.Second, "the shared log to list two's call under the shadow rule", func() bool {
		st, raw := one.Do("GET", "/api/v1/shadow?rule_id=no_push", nil)
		if st != 200 {
			t.Fatalf("GET /api/v1/shadow on replica one: %d %s", st, raw)
		}
		calls = DecodeJSON[struct{ Calls []shadowCall }](t, raw).Calls
		return len(calls) > 0
	})
	if c := calls[0]; c.Summary != "git push origin main" || c.Level != "ask" || c.ShadowLevel != "deny" {
		t.Errorf("the shadow outcome: %+v, want git push origin main asked, deny in shadow", c)
	}

	// Enforce through two; one denies.
	if st, raw := two.Do("PATCH", "/api/v1/permissions/rules/no_push", map[string]any{"mode": "enforce"}); st != 200 {
		t.Fatalf("enforce through replica two: %d %s", st, raw)
	}
	WaitFor(t, 10*time.Second, "replica one to deny git push", func() bool { return level(one, "git push origin main") == "deny" })

	// Import Claude Code's sample settings through one with the real CLI.
	ws := one.Workspace
	settings := filepath.Join(ws, ".claude", "settings.json")
	sample, err := os.ReadFile("../importer/testdata/claude-settings-docs.json")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, settings, string(sample))
	r := runCLI(t, ws, one.URL, one.Token, "", "import", "claude-code", settings, "--write")
	if r.code != 0 || !strings.Contains(r.stderr, "wrote 7 changes") {
		t.Fatalf("import --write through replica one: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	WaitFor(t, 10*time.Second, "replica two to read the imported rules", func() bool { return sees(two, "import_claude_deny_bash_curl") })
	for cmd, want := range map[string]string{"curl -s https://example.com": "deny", "npm run lint": "allow", "npm run build": "ask"} {
		if got := level(two, cmd); got != want {
			t.Errorf("replica two decides %s for %q after the import; Claude Code's settings give %s", got, cmd, want)
		}
	}
}
