package asks

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/pg"
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
	db, err := pg.Open(ctx, pgtest.NewDSN(t), pg.Options{MaxConns: conns, OpTimeout: 2 * time.Second})
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

// TestAlwaysAllowsAndEditsShareASmallPool: two replicas with two
// connections each, twelve "always allow" answers and twelve rule edits at
// once through each replica's one service.Policy, as a server runs them. An
// answer holds a connection (its ask row) while it waits for the service's
// policy lock; an edit holds that lock while it waits for a connection.
// With more than one such answer per replica at a time they wait on each
// other until the operation timeout fails them. Afterwards both replicas
// decide with every rule.
func TestAlwaysAllowsAndEditsShareASmallPool(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	var svcs []*service.Policy
	var pols []*inforce.Holder
	var asks []*Approvals
	for range 2 {
		db, err := pg.Open(context.Background(), dsn, pg.Options{MaxConns: 2, OpTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		pols = append(pols, openStore(t, db))
		svcs = append(svcs, service.NewPolicy(pols[len(pols)-1]))
		asks = append(asks, openApprovals(t, db))
	}
	const n = 12
	req := func(i int) *engine.Request {
		return &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": fmt.Sprintf("make deploy%d", i)})}
	}
	for i := range n {
		mustInsert(t, asks[0], newAsk(fmt.Sprintf("a%d", i), time.Minute, map[string]any{"command": fmt.Sprintf("make deploy%d", i)}), "")
	}
	var wg sync.WaitGroup
	for i := range n {
		r := i % 2
		wg.Go(func() {
			_, err := asks[r].Resolve(context.Background(), fmt.Sprintf("a%d", i), alwaysByAlice(), func(ctx context.Context, _ approval.Approval) (*policy.Override, error) {
				rule, _, err := svcs[r].AlwaysAllow(ctx, req(i), "alice")
				return &rule, err
			})
			if err != nil {
				t.Errorf("Resolve a%d on %d: %v", i, r, err)
			}
		})
		wg.Go(func() {
			_, _, err := svcs[r].CreateRule("", ruleOf(map[string]any{"id": fmt.Sprintf("no_push%d", i), "tools": []any{"bash"}, "pattern": fmt.Sprintf("git push%d *", i), "action": "deny"}))
			if err != nil {
				t.Errorf("CreateRule %d on %d: %v", i, r, err)
			}
		})
	}
	wg.Wait()
	for r, p := range pols {
		pgtest.WaitFor(t, 5*time.Second, fmt.Sprintf("replica %d has every rule", r), func() bool {
			e := p.Engine()
			for i := range n {
				push := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": fmt.Sprintf("git push%d x", i)})}
				if e.Evaluate(req(i)).Level != policy.Allow || e.Evaluate(push).Level != policy.Deny {
					return false
				}
			}
			return true
		})
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
