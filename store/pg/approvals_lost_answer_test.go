package pg

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/store"
)

// TestAlwaysAllowPersistedThenLostAnswer: an "always allow" answer runs the
// Persister (prepare) under the ask's row lock; the Persister commits the
// new override to the policy through another connection at once. When the
// ask's own transaction then fails (its connection dropped, the server
// restarted, the 3x operation timeout passed while a large policy
// compiled), the override stays in force but the ask stays pending: a later
// "deny" through any replica wins, the agent is denied, the approver is
// told their deny stood, and yet every later identical call is allowed by
// the override nobody sees as answered. An always-allow whose rule was
// persisted must end the ask as allowed (or not persist at all).
func TestAlwaysAllowPersistedThenLostAnswer(t *testing.T) {
	dsn := newDSN(t)
	s := openApprovals(t, openDB(t, dsn))
	killer := openDB(t, dsn)
	ctx := context.Background()
	mustInsert(t, s, newAsk("a1", time.Minute, map[string]any{"command": "make deploy"}), "")

	persisted := false
	prepare := func(approval.Approval) (map[string]any, error) {
		persisted = true // the Persister's policy write has committed
		// The connection holding the ask's row lock drops now.
		endResolvingConnection(ctx, t, killer)
		return map[string]any{"id": "aao_make_deploy", "tools": []any{"bash"}, "pattern": "make deploy"}, nil
	}
	now := time.Now().Truncate(time.Microsecond).UTC()
	always := approval.Outcome{Status: approval.StatusAllowed, Choice: approval.ChoiceAllowAlways, DecidedBy: "alice", DecidedAt: now}
	_, err := s.Resolve(ctx, "a1", always, prepare)
	if !persisted {
		t.Fatal("prepare did not run")
	}
	t.Logf("always-allow answer: err = %v", err)

	deny := approval.Outcome{Status: approval.StatusDenied, Choice: approval.ChoiceDeny, DecidedBy: "bob", DecidedAt: now.Add(time.Millisecond)}
	got, err := s.Resolve(ctx, "a1", deny, nil)
	if err == nil || !errors.Is(err, approval.ErrAlreadyDecided) {
		t.Errorf("a deny after an always-allow whose rule was persisted: stored %s by %q (err %v); want ErrAlreadyDecided with the ask allowed by alice", got.Status, got.DecidedBy, err)
	}
}

// TestAlwaysAllowOwedWhileStoreUnavailable: when the always-allow answer's
// transaction fails after its rule was written and storing the answer again
// fails too (here another session takes the ask's row lock as soon as the
// resolving connection drops, and holds it past every retry), the answer
// fails with store.ErrUnavailable; a later deny through this replica then
// stores the owed always-allow first and loses, and expiry skips the ask
// meanwhile.
func TestAlwaysAllowOwedWhileStoreUnavailable(t *testing.T) {
	dsn := newDSN(t)
	ctx := context.Background()
	db, err := Open(ctx, dsn, Options{OpTimeout: time.Second})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(db.Close)
	s := openApprovals(t, db)
	other := openDB(t, dsn)
	mustInsert(t, s, newAsk("a1", time.Minute, map[string]any{"command": "make deploy"}), "")

	holder, err := other.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx)
	locked := make(chan error, 1)
	prepare := func(approval.Approval) (map[string]any, error) {
		// Queue a lock on the row behind the resolving connection, then
		// drop that connection: the holder gets the row next.
		go func() {
			_, err := holder.Exec(ctx, `SELECT id FROM approval_asks WHERE id = 'a1' FOR UPDATE`)
			locked <- err
		}()
		for waiting := 0; waiting == 0; {
			if err := other.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
				t.Errorf("watching the holder: %v", err)
				break
			}
		}
		endResolvingConnection(ctx, t, other)
		return map[string]any{"id": "aao_make_deploy", "tools": []any{"bash"}, "pattern": "make deploy"}, nil
	}
	now := time.Now().Truncate(time.Microsecond).UTC()
	always := approval.Outcome{Status: approval.StatusAllowed, Choice: approval.ChoiceAllowAlways, DecidedBy: "alice", DecidedAt: now}
	if _, err := s.Resolve(ctx, "a1", always, prepare); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("always-allow whose answer could not be stored: got err %v, want store.ErrUnavailable", err)
	}
	if err := <-locked; err != nil {
		t.Fatalf("holder's lock: %v", err)
	}

	deny := approval.Outcome{Status: approval.StatusDenied, Choice: approval.ChoiceDeny, DecidedBy: "bob", DecidedAt: now.Add(time.Millisecond)}
	if _, err := s.Resolve(ctx, "a1", deny, nil); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("deny while the owed always-allow cannot be stored: got err %v, want store.ErrUnavailable", err)
	}
	if expired, err := s.ExpireDue(ctx, now.Add(2*time.Minute), time.Hour); err != nil || len(expired) != 0 {
		t.Errorf("expiry while the owed answer cannot be stored: got %d expired, err %v; want none", len(expired), err)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if expired, err := s.ExpireDue(ctx, now.Add(2*time.Minute), time.Hour); err != nil || len(expired) != 0 {
		t.Errorf("expiry after the row is free: got %d expired, err %v; want none (the owed answer stored first)", len(expired), err)
	}
	got, err := s.Resolve(ctx, "a1", deny, nil)
	if !errors.Is(err, approval.ErrAlreadyDecided) || got.Status != approval.StatusAllowed || got.DecidedBy != "alice" || got.PersistedRule == nil {
		t.Errorf("deny after the owed always-allow: got %s by %q rule %v (err %v); want ErrAlreadyDecided, allowed by alice with the rule", got.Status, got.DecidedBy, got.PersistedRule, err)
	}
}

// endResolvingConnection terminates the connection that holds the ask's row
// lock (the one running Resolve's SELECT ... FOR UPDATE), through db.
func endResolvingConnection(ctx context.Context, t *testing.T, db *DB) {
	t.Helper()
	var n int
	err := db.Pool().QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE '%FROM approval_asks WHERE id = $1 FOR UPDATE'`).Scan(&n)
	if err != nil || n != 1 {
		t.Errorf("ending the resolving connection: n=%d err=%v", n, err)
	}
}
