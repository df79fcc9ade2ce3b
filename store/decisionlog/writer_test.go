package decisionlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// errAway stands for "the database cannot be reached" in these tests.
var errAway = errors.New("database away")

// quiet is a logger that writes nothing.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestWriterRetriesWhileRetryable: a batch that fails with a retryable
// error is written again until it goes through, and counted once.
func TestWriterRetriesWhileRetryable(t *testing.T) {
	var calls atomic.Int32
	w := NewWriter(Options{Linger: -1, Logger: quiet}, WriterSteps{
		Write: func(_ context.Context, batch []Entry) error {
			if calls.Add(1) <= 2 {
				return fmt.Errorf("write: %w", errAway)
			}
			return nil
		},
		Prune:     func(context.Context) (int64, error) { return 0, nil },
		Retryable: func(err error) bool { return errors.Is(err, errAway) },
	})
	defer w.Close()
	w.Enqueue(Entry{Tool: "a"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if got, want := calls.Load(), int32(3); got != want {
		t.Errorf("write calls = %d, want %d", got, want)
	}
	if w.Written() != 1 || w.Failed() != 0 {
		t.Errorf("written %d failed %d, want 1 and 0", w.Written(), w.Failed())
	}
}

// TestWriterFailsOtherErrorsAtOnce: an error that is not retryable loses
// the batch at the first try, and the writer goes on with the next.
func TestWriterFailsOtherErrorsAtOnce(t *testing.T) {
	var calls atomic.Int32
	w := NewWriter(Options{BatchSize: 1, Linger: -1, Logger: quiet}, WriterSteps{
		Write: func(_ context.Context, batch []Entry) error {
			calls.Add(1)
			if batch[0].Tool == "bad" {
				return errors.New("constraint")
			}
			return nil
		},
		Prune:     func(context.Context) (int64, error) { return 0, nil },
		Retryable: func(err error) bool { return errors.Is(err, errAway) },
	})
	defer w.Close()
	w.Enqueue(Entry{Tool: "bad"})
	w.Enqueue(Entry{Tool: "good"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if calls.Load() != 2 || w.Written() != 1 || w.Failed() != 1 {
		t.Errorf("calls %d written %d failed %d, want 2, 1, 1", calls.Load(), w.Written(), w.Failed())
	}
}

// TestWriterCloseGivesUpWhileAway: closing while the database is away ends
// the retries of the batch under way and counts what is still queued as
// failed without trying it, so shutdown does not wait for every batch.
func TestWriterCloseGivesUpWhileAway(t *testing.T) {
	var mu sync.Mutex
	tried := map[string]bool{}
	w := NewWriter(Options{BatchSize: 1, Linger: -1, Logger: quiet}, WriterSteps{
		Write: func(_ context.Context, batch []Entry) error {
			mu.Lock()
			defer mu.Unlock()
			tried[batch[0].Tool] = true
			return errAway
		},
		Prune:     func(context.Context) (int64, error) { return 0, nil },
		Retryable: func(err error) bool { return errors.Is(err, errAway) },
	})
	for _, tool := range []string{"a", "b", "c"} {
		w.Enqueue(Entry{Tool: tool})
	}
	waitFor(t, "the first try", func() bool { mu.Lock(); defer mu.Unlock(); return tried["a"] })
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if w.Failed() != 3 || w.Written() != 0 {
		t.Errorf("failed %d written %d, want 3 and 0", w.Failed(), w.Written())
	}
	mu.Lock()
	defer mu.Unlock()
	if tried["b"] || tried["c"] {
		t.Errorf("tried %v after giving up, want only a", tried)
	}
}

// TestWriterPruneApartEndsWithClose: a prune on its own goroutine that
// waits on a silent database is cancelled by Close, and writes go on
// while it waits.
func TestWriterPruneApartEndsWithClose(t *testing.T) {
	var pruning atomic.Bool
	w := NewWriter(Options{PruneEvery: 5 * time.Millisecond, Linger: -1, Logger: quiet}, WriterSteps{
		Write: func(context.Context, []Entry) error { return nil },
		Prune: func(ctx context.Context) (int64, error) {
			pruning.Store(true)
			<-ctx.Done()
			return 0, ctx.Err()
		},
		PruneApart: true,
	})
	waitFor(t, "a prune", pruning.Load)
	w.Enqueue(Entry{Tool: "a"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Flush(ctx); err != nil {
		t.Fatalf("Flush during a prune: %v", err)
	}
	closed := make(chan struct{})
	go func() { w.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for the prune")
	}
	if w.Written() != 1 {
		t.Errorf("written %d, want 1", w.Written())
	}
}

// TestLingerTakesFromAQueueSmallerThanTheBatch: a lingering writer leaves
// entries in the queue until they fill its batch; when the queue cannot
// hold that many, a full queue must wake it, or every later entry would
// be dropped for the whole linger. With an hour's linger, a producer that
// waits for room must still get a whole batch written.
func TestLingerTakesFromAQueueSmallerThanTheBatch(t *testing.T) {
	const queue, batch = 4, 64
	l, _, _ := newTestLog(t, Options{QueueSize: queue, BatchSize: batch, Linger: time.Hour})
	deadline := time.Now().Add(10 * time.Second)
	for accepted := 0; accepted < batch; {
		if l.Enqueue(Entry{Tool: "bash", Level: "allow"}) {
			accepted++
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d entries accepted: the lingering writer does not take from a full queue", accepted)
		}
		time.Sleep(time.Millisecond)
	}
	for l.Written() < batch && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := l.Written(); got < batch {
		t.Fatalf("written %d entries of a full batch of %d with an hour's linger", got, batch)
	}
}
