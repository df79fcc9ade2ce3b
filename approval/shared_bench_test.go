package approval_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store/asks"
	"github.com/toolgate/toolgate/store/pg"
)

// benchReplica is openReplica for a benchmark.
func benchReplica(b *testing.B, dsn, name string) *approval.Manager {
	b.Helper()
	ctx := context.Background()
	db, err := pg.Open(ctx, dsn, pg.Options{ApplicationName: name, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatalf("pg.Open: %v", err)
	}
	shared, err := asks.OpenApprovals(ctx, db)
	if err != nil {
		b.Fatalf("OpenApprovals: %v", err)
	}
	m := approval.New(approval.Options{Timeout: time.Minute, Shared: shared, Logger: slog.New(slog.DiscardHandler)})
	b.Cleanup(func() { m.Shutdown(); db.Close() })
	return m
}

// BenchmarkSharedAskAnswerAcrossReplicas: one op is an ask opened on A,
// answered through B, until A's Wait returns the answer (two round trips
// to PostgreSQL and one notification).
func BenchmarkSharedAskAnswerAcrossReplicas(b *testing.B) {
	dsn := pgtest.Shared(b).NewDatabase(b)
	a, c := benchReplica(b, dsn, "bench-a"), benchReplica(b, dsn, "bench-b")
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		asked, _, err := a.Create(ctx, bashReq(fmt.Sprintf("bench %d", i)), askDecision(), "")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Decide(ctx, asked.ID, approval.ChoiceAllowOnce, "bob", ""); err != nil {
			b.Fatal(err)
		}
		if got, err := a.Wait(ctx, asked.ID, 10*time.Second); err != nil || got.Pending() {
			b.Fatalf("Wait: %+v %v", got, err)
		}
	}
}

// BenchmarkSharedCreate: opening one ask in shared mode (one INSERT with
// its notification).
func BenchmarkSharedCreate(b *testing.B) {
	dsn := pgtest.Shared(b).NewDatabase(b)
	m := benchReplica(b, dsn, "bench-a")
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if _, _, err := m.Create(ctx, bashReq(fmt.Sprintf("bench %d", i)), askDecision(), ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLocalAskAnswer is BenchmarkSharedAskAnswerAcrossReplicas on one
// Manager without a Shared store, for the ratio.
func BenchmarkLocalAskAnswer(b *testing.B) {
	m := approval.New(approval.Options{Timeout: time.Minute, Logger: slog.New(slog.DiscardHandler)})
	b.Cleanup(m.Shutdown)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		asked, _, err := m.Create(ctx, bashReq(fmt.Sprintf("bench %d", i)), askDecision(), "")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Decide(ctx, asked.ID, approval.ChoiceAllowOnce, "bob", ""); err != nil {
			b.Fatal(err)
		}
		if got, err := m.Wait(ctx, asked.ID, 10*time.Second); err != nil || got.Pending() {
			b.Fatalf("Wait: %+v %v", got, err)
		}
	}
}
