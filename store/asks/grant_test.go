package asks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

// A session grant made by an answer is stored in the answer's own
// transaction: it is live once the answer commits, and never when the
// answer does not (the grant used to be stored on its own first, and taken
// back by a best-effort revoke when the answer then failed).

// grantReplica is one replica's asks, grants and Granter on one database.
type grantReplica struct {
	db      *pg.DB
	asks    *Approvals
	book    *grant.Book
	granter *service.Granter
}

func openGrantReplica(t *testing.T) grantReplica {
	t.Helper()
	db := dbtest.Open(t, pgtest.NewDSN(t))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	book := grant.NewBook(openGrants(t, db), grant.Options{Reload: time.Hour})
	if err := book.Start(ctx); err != nil {
		t.Fatalf("Book.Start: %v", err)
	}
	r := grantReplica{db: db, asks: openApprovals(t, db), book: book, granter: service.NewGranter(book, openStore(t, db))}
	mustInsert(t, r.asks, newAsk("a1", time.Minute, map[string]any{"command": "npm test"}), "")
	return r
}

func (r grantReplica) storedGrants(t *testing.T) int {
	t.Helper()
	var n int
	if err := r.db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM grants`).Scan(&n); err != nil {
		t.Fatalf("count grants: %v", err)
	}
	return n
}

func sessionBy(who string) approval.Outcome {
	return approval.Outcome{Status: approval.StatusAllowed, Choice: approval.ChoiceAllowSession, DecidedBy: who,
		DecidedAt: time.Now().Truncate(time.Microsecond).UTC()}
}

// TestGrantCommitsWithItsAnswer: inside the answer no other connection sees
// the grant and the Book does not hold it; when Resolve returns, both do.
func TestGrantCommitsWithItsAnswer(t *testing.T) {
	r := openGrantReplica(t)
	_, err := r.asks.Resolve(context.Background(), "a1", sessionBy("alice"), func(ctx context.Context, a approval.Approval) (*policy.Override, error) {
		if _, err := r.granter.Grant(ctx, a, approval.ChoiceAllowSession, 0, "alice"); err != nil {
			return nil, err
		}
		if n := r.storedGrants(t); n != 0 {
			t.Errorf("%d grants seen outside before the answer commits, want 0", n)
		}
		if n := len(r.book.List()); n != 0 {
			t.Errorf("%d grants live before the answer commits, want 0", n)
		}
		return nil, nil
	})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if n := r.storedGrants(t); n != 1 {
		t.Errorf("%d grants stored after the answer, want 1", n)
	}
	if n := len(r.book.List()); n != 1 {
		t.Errorf("%d grants live right after the answer, want 1", n)
	}
}

// TestGrantOfAFailedAnswerIsNeverLive: the commit is refused (a deferred
// constraint trigger) after the grant was stored in the answer's
// transaction: no grant is stored or live, and the ask stays open.
func TestGrantOfAFailedAnswerIsNeverLive(t *testing.T) {
	r := openGrantReplica(t)
	ctx := context.Background()
	if _, err := r.db.Pool().Exec(ctx, `
		CREATE FUNCTION refuse_allowed() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN IF NEW.status = 'allowed' THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NEW; END $$;
		CREATE CONSTRAINT TRIGGER refuse_allowed AFTER UPDATE ON approval_asks
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_allowed();`); err != nil {
		t.Fatalf("trigger: %v", err)
	}
	_, err := r.asks.Resolve(ctx, "a1", sessionBy("alice"), func(ctx context.Context, a approval.Approval) (*policy.Override, error) {
		_, err := r.granter.Grant(ctx, a, approval.ChoiceAllowSession, 0, "alice")
		return nil, err
	})
	if err == nil || !strings.Contains(err.Error(), "refused at commit") {
		t.Fatalf("Resolve: err %v, want the commit refused", err)
	}
	if n := r.storedGrants(t); n != 0 {
		t.Errorf("%d grants stored for an answer that did not commit, want 0", n)
	}
	if err := r.book.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(r.book.List()); n != 0 {
		t.Errorf("%d grants live for an answer that did not commit, want 0", n)
	}
	if got, _ := r.asks.Get(ctx, "a1"); got.Status != approval.StatusPending {
		t.Errorf("ask %s after the refused answer, want pending", got.Status)
	}
}
