package asks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

// These tests answer an ask "always allow" the way a replica does: the
// approval's prepare writes the override through service.Policy into the
// policy document, on the database the asks live in. The rule and the
// outcome must commit together or not at all, and the rule must decide on
// no replica before its commit.

var makeDeploy = &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make deploy"})}

// alwaysAllowReplica is one replica's ask store and policy on one database.
type alwaysAllowReplica struct {
	db     *pg.DB
	asks   *Approvals
	policy *inforce.Holder
}

func openAlwaysAllowReplica(t *testing.T, dsn string) alwaysAllowReplica {
	t.Helper()
	db := dbtest.Open(t, dsn)
	r := alwaysAllowReplica{db: db, asks: openApprovals(t, db), policy: openStore(t, db)}
	if got := r.policy.Engine().Evaluate(makeDeploy).Level; got != policy.Ask {
		t.Fatalf("make deploy under the default policy: %s, want ask", got)
	}
	mustInsert(t, r.asks, newAsk("a1", time.Minute, map[string]any{"command": "make deploy"}), "")
	return r
}

// persist is the prepare an "always allow" answer runs, then during.
func (r alwaysAllowReplica) persist(t *testing.T, during func(ctx context.Context)) func(context.Context, approval.Approval) (*policy.Override, error) {
	return func(ctx context.Context, _ approval.Approval) (*policy.Override, error) {
		rule, created, err := service.NewPolicy(r.policy).AlwaysAllow(ctx, makeDeploy, "alice")
		if err != nil || !created {
			t.Errorf("AlwaysAllow: created %v, err %v", created, err)
		}
		if during != nil {
			during(ctx)
		}
		return &rule, err
	}
}

// version is the stored policy document's version, read outside any
// transaction of the test's subject.
func (r alwaysAllowReplica) version(t *testing.T) int64 {
	t.Helper()
	var v int64
	if err := r.db.Pool().QueryRow(context.Background(), `SELECT version FROM policy_document WHERE id = 1`).Scan(&v); err != nil {
		t.Fatalf("policy version: %v", err)
	}
	return v
}

func alwaysByAlice() approval.Outcome {
	return approval.Outcome{Status: approval.StatusAllowed, Choice: approval.ChoiceAllowAlways, DecidedBy: "alice", DecidedAt: time.Now().Truncate(time.Microsecond).UTC()}
}

// noRuleAndStillPending: after an always-allow answer that did not commit,
// the document is unchanged, no replica allows the call, and the ask is
// still open: a later deny wins.
func (r alwaysAllowReplica) noRuleAndStillPending(t *testing.T, before int64) {
	t.Helper()
	if v := r.version(t); v != before {
		t.Errorf("policy version %d after the failed answer, want %d (nothing committed)", v, before)
	}
	if err := r.policy.Reload(); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if got := r.policy.Engine().Evaluate(makeDeploy).Level; got != policy.Ask {
		t.Errorf("make deploy after the failed answer: %s, want ask (no rule in force)", got)
	}
	var config string
	if err := r.db.Pool().QueryRow(context.Background(), `SELECT config FROM policy_document WHERE id = 1`).Scan(&config); err != nil || strings.Contains(config, "make deploy") {
		t.Errorf("the stored document holds the override of an answer that did not commit (err %v)", err)
	}
	deny := approval.Outcome{Status: approval.StatusDenied, Choice: approval.ChoiceDeny, DecidedBy: "bob", DecidedAt: time.Now().Truncate(time.Microsecond).UTC()}
	if got, err := r.asks.Resolve(context.Background(), "a1", deny, nil); err != nil || got.Status != approval.StatusDenied {
		t.Errorf("deny after the failed always-allow: got %s (err %v), want the deny to stand", got.Status, err)
	}
}

// TestAlwaysAllowCommitsWithItsAnswer: the override is written inside the
// answer's transaction: before the commit no other connection sees it and
// the replica's engine still asks; after it the ask is allowed with the
// rule, the document has one more version, and both replicas allow.
func TestAlwaysAllowCommitsWithItsAnswer(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	r := openAlwaysAllowReplica(t, dsn)
	other := openStore(t, dbtest.Open(t, dsn))
	before := r.version(t)
	during := func(context.Context) {
		if v := r.version(t); v != before {
			t.Errorf("policy version %d seen outside before the answer commits, want %d", v, before)
		}
		if got := r.policy.Engine().Evaluate(makeDeploy).Level; got != policy.Ask {
			t.Errorf("make deploy before the answer commits: %s, want ask", got)
		}
	}
	got, err := r.asks.Resolve(context.Background(), "a1", alwaysByAlice(), r.persist(t, during))
	if err != nil || got.Status != approval.StatusAllowed || got.PersistedRule == nil || got.PersistedRule.Pattern != "make deploy" {
		t.Fatalf("Resolve: %s rule %v err %v, want allowed with the make deploy rule", got.Status, got.PersistedRule, err)
	}
	if v := r.version(t); v != before+1 {
		t.Errorf("policy version %d after the answer, want %d", v, before+1)
	}
	if lvl := r.policy.Engine().Evaluate(makeDeploy).Level; lvl != policy.Allow {
		t.Errorf("make deploy on the answering replica right after the answer: %s, want allow", lvl)
	}
	pgtest.WaitFor(t, 2*time.Second, "the other replica allows make deploy", func() bool {
		return other.Engine().Evaluate(makeDeploy).Level == policy.Allow
	})
}

// TestAlwaysAllowLostConnectionKeepsNoRule: the connection that holds the
// ask drops after the override was written in its transaction (the old
// two-transaction design left the rule in force and the ask open, so a
// later deny stood while every identical call was allowed). Now neither is
// stored: no rule, the ask open, and a later deny stands, consistently.
func TestAlwaysAllowLostConnectionKeepsNoRule(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	r := openAlwaysAllowReplica(t, dsn)
	killer := dbtest.Open(t, dsn)
	before := r.version(t)
	drop := func(ctx context.Context) { endAskHolder(ctx, t, killer) }
	if _, err := r.asks.Resolve(context.Background(), "a1", alwaysByAlice(), r.persist(t, drop)); err == nil {
		t.Fatal("Resolve succeeded on a dropped connection")
	}
	r.noRuleAndStillPending(t, before)
}

// TestAlwaysAllowFailedCommitKeepsNoRule: the commit itself fails (a
// deferred constraint trigger refuses the outcome at COMMIT), after the
// store accepted the override's write. The policy in force must not have
// taken it: the store puts a joined write in force only once the answer's
// transaction committed.
func TestAlwaysAllowFailedCommitKeepsNoRule(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	r := openAlwaysAllowReplica(t, dsn)
	ctx := context.Background()
	if _, err := r.db.Pool().Exec(ctx, `
		CREATE FUNCTION refuse_allowed() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN IF NEW.status = 'allowed' THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NEW; END $$;
		CREATE CONSTRAINT TRIGGER refuse_allowed AFTER UPDATE ON approval_asks
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_allowed();`); err != nil {
		t.Fatalf("trigger: %v", err)
	}
	before := r.version(t)
	_, err := r.asks.Resolve(ctx, "a1", alwaysByAlice(), r.persist(t, nil))
	if err == nil || !strings.Contains(err.Error(), "refused at commit") {
		t.Fatalf("Resolve: err %v, want the commit refused", err)
	}
	if got := r.policy.Engine().Evaluate(makeDeploy).Level; got != policy.Ask {
		t.Errorf("make deploy right after the refused commit: %s, want ask", got)
	}
	r.noRuleAndStillPending(t, before)
}

// TestAlwaysAllowAndALocalWriteBothInForce: a write through the same
// replica that waits for the policy row while the answer's transaction
// holds it commits after the answer, and goes in force before the answer's
// own snapshot could. The answer must not then put its older snapshot in
// force over it: both the override and the other write decide.
func TestAlwaysAllowAndALocalWriteBothInForce(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	r := openAlwaysAllowReplica(t, dsn)
	watcher := dbtest.Open(t, dsn)
	wrote := make(chan error, 1)
	during := func(ctx context.Context) {
		go func() {
			_, err := r.policy.CreateRule(ruleOf(map[string]any{"id": "no_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "deny"}))
			wrote <- err
		}()
		pgtest.WaitFor(t, 5*time.Second, "the local write waits for the policy row", func() bool {
			var n int
			err := watcher.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
			return err == nil && n > 0
		})
	}
	if _, err := r.asks.Resolve(context.Background(), "a1", alwaysByAlice(), r.persist(t, during)); err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	// The answer's commit hook ran in Resolve, after the local write (it
	// waited for the replica's lock that write held): both decide now,
	// before any notification could have reloaded the policy.
	e := r.policy.Engine()
	if a, p := e.Evaluate(makeDeploy).Level, e.Evaluate(gitPush).Level; a != policy.Allow || p != policy.Deny {
		t.Errorf("right after the answer: make deploy %s, git push %s; want allow and deny", a, p)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("CreateRule: %v", err)
	}
}

// endAskHolder terminates the connection that holds an ask's row lock
// (the FOR UPDATE of Resolve), through db.
func endAskHolder(ctx context.Context, t *testing.T, db *pg.DB) {
	t.Helper()
	var n int
	err := db.Pool().QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM
		(SELECT DISTINCT pid FROM pg_locks WHERE relation = 'approval_asks'::regclass AND mode = 'RowShareLock' AND pid <> pg_backend_pid()) holders`).Scan(&n)
	if err != nil || n != 1 {
		t.Errorf("ending the connection that holds the ask: n=%d err=%v", n, err)
	}
}
