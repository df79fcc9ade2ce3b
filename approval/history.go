package approval

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// historyWriter keeps History off the hot path: one goroutine drains a
// buffered queue; a full queue drops the record and counts it rather than
// slow down an ask or an answer.
type historyWriter struct {
	h       History
	queue   chan Approval
	done    chan struct{}
	log     *slog.Logger
	dropped atomic.Uint64
	errors  atomic.Uint64
	closed  atomic.Bool
}

func newHistoryWriter(h History, buffer int, log *slog.Logger) *historyWriter {
	w := &historyWriter{h: h, queue: make(chan Approval, buffer), done: make(chan struct{}), log: log}
	go w.run()
	return w
}

// enqueue is called under the manager's lock, so it never blocks.
func (w *historyWriter) enqueue(a Approval) {
	if w.closed.Load() {
		w.dropped.Add(1)
		return
	}
	select {
	case w.queue <- a:
	default:
		w.dropped.Add(1)
	}
}

func (w *historyWriter) run() {
	defer close(w.done)
	for a := range w.queue {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := w.h.RecordApproval(ctx, a); err != nil {
			w.errors.Add(1)
			w.log.Warn("approval: history write failed", "id", a.ID, "status", a.Status, "err", err)
		}
		cancel()
	}
}

// stop closes the queue; the manager calls it under its lock, the same lock
// every enqueue runs under, so no send can race the close.
func (w *historyWriter) stop() {
	if !w.closed.Swap(true) {
		close(w.queue)
	}
}

// wait waits up to d for the writer to drain the queue.
func (w *historyWriter) wait(d time.Duration) {
	select {
	case <-w.done:
	case <-time.After(d):
		w.log.Warn("approval: history writer did not drain in time")
	}
}
