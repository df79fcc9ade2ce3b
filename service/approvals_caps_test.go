package service

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// TestPendingCaps checks that one token's pending asks, and one session's,
// are capped with a 429, that answered asks free their slots, and that
// another token is not affected.
func TestPendingCaps(t *testing.T) {
	m := approval.New(approval.Options{})
	s := NewApprovals(m)
	s.SetPendingCaps(PendingCaps{PerToken: 5, PerSession: 3})
	ask := func(token, session, cmd string) error {
		req := engine.Request{Call: engine.NewCall("bash", map[string]any{"command": cmd}), ChannelID: "web"}
		_, err := s.Ask(context.Background(), token, &req, engine.Decision{Level: policy.Ask, MatchedRule: "tools.bash"}, session, "rest", 0)
		return err
	}
	var ids []string
	for i := range 5 {
		if err := ask("tok_a", "", fmt.Sprintf("make %d", i)); err != nil {
			t.Fatalf("ask %d: %v", i, err)
		}
	}
	err := ask("tok_a", "", "make 5")
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindTooMany || e.Code != CodeTooManyPending {
		t.Fatalf("the sixth ask: %v, want KindTooMany", err)
	}
	if err := ask("tok_a", "", "make 0"); !errors.As(err, &e) || e.Kind != KindTooMany {
		t.Errorf("at the cap even an identical ask is refused: %v", err)
	}
	for _, a := range m.List(approval.Filter{}, approval.StatusPending) {
		ids = append(ids, a.ID)
	}
	if _, err := m.Decide(context.Background(), ids[0], approval.ChoiceDeny, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if err := ask("tok_a", "", "make 6"); err != nil {
		t.Errorf("after one answer a slot is free: %v", err)
	}
	if err := ask("tok_b", "", "make 7"); err != nil {
		t.Errorf("another token: %v", err)
	}
	for i := range 3 {
		if err := ask("tok_b", "s1", fmt.Sprintf("test %d", i)); err != nil {
			t.Fatalf("session ask %d: %v", i, err)
		}
	}
	if err := ask("tok_b", "s1", "test 3"); !errors.As(err, &e) || e.Kind != KindTooMany {
		t.Errorf("the fourth ask of a session: %v, want KindTooMany", err)
	}
}
