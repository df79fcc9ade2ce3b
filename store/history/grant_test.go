package history

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/grant"
)

// grantedScript is an ask from an agent answered with a grant whose
// pattern holds a secret, for the history tests of both backends. The
// answer is written twice (a repeat must change nothing) and a late answer
// without the grant after it.
func grantedScript(base time.Time) []approval.Approval {
	ask := approval.Approval{
		ID: "gr1", Status: approval.StatusPending, CreatedAt: base, ExpiresAt: base.Add(5 * time.Minute),
		Request: approval.Request{ToolName: "bash", ToolArgs: map[string]any{"command": "mysql -pSECRET db"},
			ChannelID: "web", SessionID: "s9", Workspace: "/w", Agent: "claude-code", TokenID: "tok1"},
		Asked: approval.Asked{MatchedRule: "tools.bash", Reason: "Approval required for bash"},
	}
	at := base.Add(time.Minute)
	done := ask
	done.Status, done.Choice, done.DecidedBy, done.DecidedAt = approval.StatusAllowed, approval.ChoiceAllowFor, "alice", &at
	done.Decision = approval.DecisionAllow
	done.Grant = &grant.Grant{ID: "g-42", ToolName: "bash", Scope: grant.ScopeTimed, MatchType: "glob",
		Pattern: "mysql -pSECRET db", ChannelID: "web", Workspace: "/w", Agent: "claude-code",
		ApprovalID: "gr1", GrantedBy: "alice", CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	late := done
	late.Grant, late.DecidedBy = nil, "bob"
	return []approval.Approval{ask, done, done, late}
}

// checkGranted checks what grantedScript must leave: the agent and the
// grant read back, the grant's pattern masked.
func checkGranted(t *testing.T, h interface {
	GetApproval(ctx context.Context, id string) (approval.Approval, error)
}, base time.Time) {
	t.Helper()
	got, err := h.GetApproval(context.Background(), "gr1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Request.Agent != "claude-code" || got.DecidedBy != "alice" {
		t.Errorf("agent %q decided by %q, want claude-code and alice (the first answer)", got.Request.Agent, got.DecidedBy)
	}
	g := got.Grant
	if g == nil || g.ID != "g-42" || g.Scope != grant.ScopeTimed || !g.ExpiresAt.Equal(base.Add(time.Minute+time.Hour)) {
		t.Fatalf("grant read back as %+v, want g-42 timed until an hour after the answer", g)
	}
	if strings.Contains(g.Pattern, "SECRET") || !strings.HasPrefix(g.Pattern, "mysql -p") {
		t.Errorf("grant pattern %q: want the secret masked and the rest kept", g.Pattern)
	}
}

// TestHistoryKeepsAgentAndGrant: an answer read back after a restart still
// says which agent asked and what grant it made, until when.
func TestHistoryKeepsAgentAndGrant(t *testing.T) {
	db, path := openTestDB(t)
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, a := range grantedScript(base) {
		if err := db.RecordApproval(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	again, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	checkGranted(t, again, base)
}
