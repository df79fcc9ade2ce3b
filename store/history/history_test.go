package history

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

func openTestDB(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "approvals.db")
	db, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func histApproval(id string, created time.Time) approval.Approval {
	return approval.Approval{
		ID: id, Status: approval.StatusPending, CreatedAt: created, ExpiresAt: created.Add(5 * time.Minute),
		Request: approval.Request{ToolName: "bash", ToolArgs: map[string]any{"command": "make"}, ChannelID: "web", SessionID: "s1", Workspace: "/w"},
		Asked:   approval.Asked{MatchedRule: "tools.bash", Reason: "Approval required for bash (rule: tools.bash)", ExternalPaths: []string{"/etc"}},
	}
}

func resolved(a approval.Approval, st approval.Status, c approval.Choice, by string, at time.Time) approval.Approval {
	a.Status, a.Choice, a.DecidedBy, a.DecidedAt = st, c, by, &at
	a.Decision = approval.DecisionDeny
	if st == approval.StatusAllowed {
		a.Decision = approval.DecisionAllow
	}
	return a
}

func TestRecordApprovalLifecycle(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	a := histApproval("a1", t0)
	if err := db.RecordApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	done := resolved(a, approval.StatusAllowed, approval.ChoiceAllowAlways, "alice", t0.Add(time.Minute))
	done.Comment = "ok"
	done.PersistedRule = &policy.Override{ID: "user_allow_bash_command_make"}
	for range 2 { // a repeated write records nothing new
		if err := db.RecordApproval(ctx, done); err != nil {
			t.Fatal(err)
		}
	}
	late := resolved(a, approval.StatusExpired, "", approval.PrincipalSystem, t0.Add(5*time.Minute))
	if err := db.RecordApproval(ctx, late); err != nil { // a late write cannot change the answer
		t.Fatal(err)
	}
	if err := db.RecordApproval(ctx, a); err != nil { // nor move it back to pending
		t.Fatal(err)
	}
	got, err := db.GetApproval(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != approval.StatusAllowed || got.Choice != approval.ChoiceAllowAlways || got.DecidedBy != "alice" ||
		got.Comment != "ok" || got.Decision != "allow" || got.DecidedAt == nil || !got.DecidedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("stored state: got %+v", got)
	}
	if !got.CreatedAt.Equal(t0) || got.Request.ToolArgs["command"] != "make" || got.Asked.ExternalPaths[0] != "/etc" ||
		got.PersistedRule == nil || got.PersistedRule.ID != "user_allow_bash_command_make" || got.Request.SessionID != "s1" {
		t.Errorf("stored context: got %+v", got)
	}
	events, err := db.ApprovalEvents(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Status != approval.StatusPending || events[1].Status != approval.StatusAllowed ||
		events[1].Actor != "alice" || events[1].Choice != approval.ChoiceAllowAlways || !events[1].At.Equal(t0.Add(time.Minute)) {
		t.Errorf("events: got %+v, want pending then allowed by alice", events)
	}
	if _, err := db.GetApproval(ctx, "nope"); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("GetApproval unknown: got %v, want ErrNotFound", err)
	}
}

func TestRecordApprovalRedactsArgs(t *testing.T) {
	db, _ := openTestDB(t)
	a := histApproval("a1", time.Now())
	a.Request.ToolArgs = map[string]any{"command": "curl -H 'Authorization: Bearer s3cretvalue' x", "api_key": "k-123"}
	if err := db.RecordApproval(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	var raw string
	if err := db.db.SQL().QueryRow(`SELECT tool_args FROM approvals WHERE id = 'a1'`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, "s3cretvalue") || strings.Contains(raw, "k-123") {
		t.Errorf("stored tool_args keep a secret: %s", raw)
	}
}

func TestListApprovalsPaging(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := range 7 {
		a := histApproval(fmt.Sprintf("a%d", i), t0.Add(time.Duration(i)*time.Second))
		if i%2 == 1 {
			a = resolved(a, approval.StatusDenied, approval.ChoiceDeny, "bob", t0.Add(time.Hour))
		}
		if err := db.RecordApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	cursor, pages := "", 0
	for {
		page, err := db.ListApprovals(ctx, Query{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, a := range page.Approvals {
			ids = append(ids, a.ID)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if got, want := strings.Join(ids, ","), "a6,a5,a4,a3,a2,a1,a0"; got != want || pages != 3 {
		t.Errorf("paged ids: got %s in %d pages, want %s in 3", got, pages, want)
	}
	denied, err := db.ListApprovals(ctx, Query{Status: approval.StatusDenied})
	if err != nil || len(denied.Approvals) != 3 || denied.NextCursor != "" {
		t.Errorf("status filter: got %d approvals %v, want 3", len(denied.Approvals), err)
	}
	if _, err := db.ListApprovals(ctx, Query{Cursor: "garbage"}); !errors.Is(err, ErrBadCursor) {
		t.Errorf("bad cursor: got %v, want ErrBadCursor", err)
	}
}

// TestHistoryWithManager drives the real approval.Manager against the real
// database: every change lands in history with the step that asked, and a
// restart cancels the asks the previous run left pending.
func TestHistoryWithManager(t *testing.T) {
	db, path := openTestDB(t)
	ctx := context.Background()
	ask := engine.Decision{Level: policy.Ask, MatchedRule: "tools.bash", Reason: "Approval required for bash (rule: tools.bash)", Cause: engine.CauseEscalation}
	req := engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make"}), ChannelID: "web"}
	m := approval.New(approval.Options{History: db, Logger: slog.New(slog.DiscardHandler)})
	answered, _, err := m.Create(ctx, req, ask, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Decide(ctx, answered.ID, approval.ChoiceDeny, "alice", "no"); err != nil {
		t.Fatal(err)
	}
	req.Call = engine.NewCall("bash", map[string]any{"command": "make install"})
	left, _, err := m.Create(ctx, req, ask, "s1")
	if err != nil {
		t.Fatal(err)
	}
	// A crash: the process dies with left still pending, and no Shutdown.
	// Wait for the history writer to record it, as it would have before dying.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if a, err := db.GetApproval(ctx, left.ID); err == nil && a.Pending() {
			if b, _ := db.GetApproval(ctx, answered.ID); b.Status == approval.StatusDenied {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("history writer did not record the asks")
		}
		time.Sleep(5 * time.Millisecond)
	}
	db.Close()
	reopened, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	next := approval.New(approval.Options{History: reopened})
	defer next.Shutdown()
	n, err := next.RecoverHistory(ctx)
	if err != nil || n != 1 {
		t.Fatalf("RecoverHistory: got %d %v, want 1", n, err)
	}
	got, err := reopened.GetApproval(ctx, left.ID)
	if err != nil || got.Status != approval.StatusCancelled || got.Decision != "deny" || got.DecidedBy != approval.PrincipalSystem ||
		got.Asked.Cause != engine.CauseEscalation {
		t.Errorf("left-behind ask after restart: got %+v %v, want cancelled by system, asked by the escalation", got, err)
	}
	if got, err := reopened.GetApproval(ctx, answered.ID); err != nil || got.Asked.Cause != engine.CauseEscalation {
		t.Errorf("answered ask's cause: got %q (err %v), want %q", got.Asked.Cause, err, engine.CauseEscalation)
	}
	events, _ := reopened.ApprovalEvents(ctx, answered.ID)
	if len(events) != 2 || events[1].Actor != "alice" || events[1].Choice != approval.ChoiceDeny || events[1].Comment != "no" {
		t.Errorf("answered ask's events: got %+v", events)
	}
	m.Shutdown() // the old manager's late writes go to a closed DB and are only logged
}
