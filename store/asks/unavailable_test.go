package asks

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

// TestServerThatCannotServeIsUnavailable: a server that cancels a statement
// on its own (statement_timeout or lock_timeout set by the DBA on the role,
// pg_cancel_backend) cannot serve right now, like one that does not answer
// within the operation timeout: a new ask must fail with store.ErrUnavailable
// so /check and the hooks answer deny with the database named (openapi.yaml),
// not a 500 "internal error". Here the asks table is locked by another
// session and the role's statement_timeout is 200 ms.
func TestServerThatCannotServeIsUnavailable(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	openApprovals(t, dbtest.Open(t, dsn)) // migrates
	ctx := context.Background()
	for _, param := range []string{"statement_timeout=200", "lock_timeout=200"} {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		name, value, _ := strings.Cut(param, "=")
		q.Set(name, value)
		u.RawQuery = q.Encode()
		db, err := pg.Open(ctx, u.String(), pg.Options{})
		if err != nil {
			t.Fatal(err)
		}
		shared := &Approvals{db: db, log: db.Log()}
		locker := dbtest.Open(t, dsn)
		tx, err := locker.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE approval_asks IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		_, _, err = shared.Insert(ctx, newAsk("x_"+param[:4], time.Minute, nil), "")
		_ = tx.Rollback(ctx)
		db.Close()
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s: Insert while the table is locked: %v; want an error wrapping store.ErrUnavailable", param, err)
		}
	}
}
