package pg

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
)

// TestScopedAnswersShareASmallPool: as many "allow for this session"
// answers at once as the pool has connections. Each Resolve holds a
// connection (its ask row) while its prepare stores the grant through
// another connection of the same pool (service.Granter, grant.Book on this
// database); without one prepare at a time, every answer waits for a
// connection another one holds, until the operation timeout fails it.
func TestScopedAnswersShareASmallPool(t *testing.T) {
	const conns = 2
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := Open(ctx, newDSN(t), Options{MaxConns: conns, OpTimeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(db.Close)
	asks := openApprovals(t, db)
	book := grant.NewBook(openGrants(t, db), grant.Options{Reload: time.Hour})
	if err := book.Start(ctx); err != nil {
		t.Fatalf("Book.Start: %v", err)
	}
	granter := service.NewGranter(book, openStore(t, db))
	for i := range conns {
		mustInsert(t, asks, newAsk(fmt.Sprintf("a%d", i), time.Minute, map[string]any{"command": "npm test"}), "")
	}
	var held sync.WaitGroup // every answer holds its ask row before any grant is stored
	held.Add(conns)
	errs := make([]error, conns)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			out := approval.Outcome{Status: approval.StatusAllowed, Choice: approval.ChoiceAllowSession, DecidedBy: "alice",
				DecidedAt: time.Now().Truncate(time.Microsecond).UTC()}
			_, errs[i] = asks.Resolve(ctx, fmt.Sprintf("a%d", i), out, func(ctx context.Context, a approval.Approval) (*policy.Override, error) {
				held.Done()
				waitOrTimeout(&held, 200*time.Millisecond) // alone, it does not wait for the other
				_, err := granter.Grant(ctx, a, approval.ChoiceAllowSession, 0, "alice")
				return nil, err
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("answer a%d: %v", i, err)
		}
	}
	if got := len(book.List()); got != conns {
		t.Errorf("%d grants live, want %d", got, conns)
	}
}

// waitOrTimeout waits for wg, or d at most.
func waitOrTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
