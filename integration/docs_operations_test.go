package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// unitExecStart reads the ExecStart line of the systemd unit in
// docs/operations.md, split into words (the unit quotes nothing).
func unitExecStart(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ExecStart=(.+)$`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/operations.md has no ExecStart line")
	}
	return strings.Fields(string(m[1]))
}

// TestOperationsUnitStartsTheServer starts the systemd unit's ExecStart
// line as written (its directories moved under a temp dir) and checks what
// operations.md says of it: the program is the server, which stays up and
// serves, and /readyz and /metrics take an admin or approver token while an
// agent token gets 403.
func TestOperationsUnitStartsTheServer(t *testing.T) {
	words := unitExecStart(t)
	if filepath.Base(words[0]) != "toolgate-server" {
		t.Fatalf("the unit starts %s; make build writes the server as bin/toolgate-server", words[0])
	}
	root := t.TempDir()
	s := &Server{t: t, ConfigDir: filepath.Join(root, "var/lib/toolgate"), Workspace: filepath.Join(root, "srv/agents")}
	if err := os.MkdirAll(s.Workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, w := range words[1:] {
		switch w {
		case "/var/lib/toolgate":
			w = s.ConfigDir
		case "/srv/agents":
			w = s.Workspace
		}
		s.args = append(s.args, w)
	}
	s.start() // fails the test when the process exits or never serves
	t.Cleanup(s.Stop)

	tokens := map[string]string{"admin": s.Token,
		"approver": createToken(t, s, "ops-approver", "approver"),
		"agent":    createToken(t, s, "ops-agent", "agent")}
	want := map[string]int{"admin": 200, "approver": 200, "agent": 403}
	for _, path := range []string{"/readyz", "/metrics"} {
		for role, tok := range tokens {
			if status, body := s.DoToken(tok, "GET", path, nil); status != want[role] {
				t.Errorf("GET %s with an %s token: %d %s, operations.md says %d", path, role, status, body, want[role])
			}
		}
	}
	if !strings.Contains(s.Output(), `"level":"INFO"`) {
		t.Errorf("--log-format json: the server's log is not JSON:\n%s", s.Output())
	}
}
