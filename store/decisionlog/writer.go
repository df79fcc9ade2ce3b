package decisionlog

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// WriterSteps are what a Writer does with its batches: the part of a
// decision log that knows its database.
type WriterSteps struct {
	// Write stores one batch, whole or not at all. Only the writer
	// goroutine calls it, so it may keep state (prepared statements) of
	// its own. It may call Entry.Prepare and fill defaults in the batch's
	// entries; a retry hands it the same entries again.
	Write func(ctx context.Context, batch []Entry) error
	// Prune deletes what the retention and MaxRows no longer keep; it runs
	// every PruneEvery.
	Prune func(ctx context.Context) (int64, error)
	// PruneApart runs Prune on a goroutine of its own, cancelled by Close,
	// so that a long prune, or one waiting on a server that does not
	// answer, never holds up writes (a server that lets a DELETE and an
	// insert run at once). Otherwise the writer prunes between batches
	// (one writer at a time anyway, as in SQLite).
	PruneApart bool
	// Retryable reports a write error that will pass when the database is
	// back (it cannot be reached). Such a batch is written again, with
	// backoff, until it is written or Close is called, while new entries
	// wait in the queue; once it fails so while closing, what remains is
	// counted as failed without a try, so that shutdown does not wait an
	// operation timeout per batch. nil: no error is retried.
	Retryable func(error) bool
	// Stopped, if set, runs on the writer goroutine after its last write
	// (to release what Write kept).
	Stopped func()
}

// Retry backoff of the writer while Retryable errors last.
const (
	writeBackoffMin = 100 * time.Millisecond
	writeBackoffMax = 2 * time.Second
)

// Writer is the writer loop of a decision log (SQLite's and PostgreSQL's):
// Enqueue never blocks: entries go through a buffered channel to one
// writer goroutine that writes them in batches (up to BatchSize, after
// waiting up to Linger for a batch to fill), so a slow database never
// slows a decision; when the queue is full, entries are dropped and
// counted. It prunes every PruneEvery.
type Writer struct {
	opts    Options
	steps   WriterSteps
	queue   chan Entry
	flushes chan chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	// pruneDone is closed when the pruning goroutine (PruneApart) has
	// returned; without one it is closed from the start.
	pruneDone chan struct{}

	// gaveUp is set by the writer when a write failed with a Retryable
	// error while closing: what remains is counted as failed, unwritten.
	gaveUp bool

	dropped atomic.Uint64
	failed  atomic.Uint64
	written atomic.Uint64

	// want is how many queued entries fill the batch the writer lingers
	// over (math.MaxInt64 when it does not linger); full wakes it once
	// that many are queued. A lingering writer takes no entry off the
	// queue until then, so that each decision's Enqueue is a buffered
	// send that wakes no goroutine (BENCHMARKS.md "Eighth round").
	want atomic.Int64
	full chan struct{}
}

// NewWriter starts the writer (and pruner) of a decision log with opts
// (zero fields take the defaults) and steps. Close stops them.
func NewWriter(opts Options, steps WriterSteps) *Writer {
	opts.Fill()
	if steps.Retryable == nil {
		steps.Retryable = func(error) bool { return false }
	}
	w := &Writer{
		opts: opts, steps: steps,
		queue:     make(chan Entry, opts.QueueSize),
		flushes:   make(chan chan struct{}),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		pruneDone: make(chan struct{}),
		full:      make(chan struct{}, 1),
	}
	w.want.Store(math.MaxInt64)
	go w.run()
	if steps.PruneApart {
		go w.pruneLoop()
	} else {
		close(w.pruneDone)
	}
	return w
}

// Enqueue hands an entry to the writer without waiting. When the queue is
// full the entry is dropped, counted by Dropped, and false is returned.
func (w *Writer) Enqueue(e Entry) bool {
	select {
	case w.queue <- e:
		if int64(len(w.queue)) >= w.want.Load() {
			select {
			case w.full <- struct{}{}:
			default: // the writer is woken already
			}
		}
		return true
	default:
		w.dropped.Add(1)
		return false
	}
}

// Dropped is the number of entries dropped because the queue was full.
func (w *Writer) Dropped() uint64 { return w.dropped.Load() }

// Failed is the number of entries lost to write errors.
func (w *Writer) Failed() uint64 { return w.failed.Load() }

// Written is the number of entries written.
func (w *Writer) Written() uint64 { return w.written.Load() }

// QueueLen is the number of entries waiting for the writer.
func (w *Writer) QueueLen() int { return len(w.queue) }

// Flush waits until every entry enqueued before the call is written (or
// lost to an error), or ctx ends.
func (w *Writer) Flush(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case w.flushes <- ack:
	case <-w.done:
		return errors.New("decision log is closed")
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close writes what is queued (see WriterSteps.Retryable for a database
// that cannot be reached), stops the writer and the pruner and waits for
// both. It closes no database.
func (w *Writer) Close() error {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	<-w.pruneDone
	return nil
}

// run is the writer goroutine: batches writes, and prunes unless a
// goroutine of its own does.
func (w *Writer) run() {
	defer close(w.done)
	if w.steps.Stopped != nil {
		defer w.steps.Stopped()
	}
	var tick <-chan time.Time
	if !w.steps.PruneApart {
		prune := time.NewTicker(w.opts.PruneEvery)
		defer prune.Stop()
		tick = prune.C
	}
	batch := make([]Entry, 0, w.opts.BatchSize)
	for {
		select {
		case e := <-w.queue:
			batch = w.linger(w.fillBatch(append(batch[:0], e)))
			w.write(batch)
		case ack := <-w.flushes:
			w.drain(batch)
			close(ack)
		case <-tick:
			w.prune(context.Background())
		case <-w.stop:
			w.drain(batch)
			return
		}
	}
}

// pruneLoop prunes every PruneEvery until the log closes; closing cancels
// a prune under way.
func (w *Writer) pruneLoop() {
	defer close(w.pruneDone)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-w.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	tick := time.NewTicker(w.opts.PruneEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			w.prune(ctx)
		case <-w.stop:
			return
		}
	}
}

// prune runs the prune step and logs its failure (not when ctx was
// cancelled by Close).
func (w *Writer) prune(ctx context.Context) {
	if _, err := w.steps.Prune(ctx); err != nil && ctx.Err() == nil {
		w.opts.Logger.Warn("decision log prune failed", "err", err)
	}
}

// fillBatch adds what is already queued, up to BatchSize, without waiting.
func (w *Writer) fillBatch(batch []Entry) []Entry {
	for len(batch) < w.opts.BatchSize {
		select {
		case e := <-w.queue:
			batch = append(batch, e)
		default:
			return batch
		}
	}
	return batch
}

// linger waits up to Linger for more entries, until the batch is full or
// the log is closing. It sleeps until enough entries are queued to fill
// the batch (see want) or the time is up, then takes them.
func (w *Writer) linger(batch []Entry) []Entry {
	if w.opts.Linger < 0 || len(batch) >= w.opts.BatchSize {
		return batch
	}
	timer := time.NewTimer(w.opts.Linger)
	defer timer.Stop()
	defer w.want.Store(math.MaxInt64)
	for {
		batch = w.fillBatch(batch)
		if len(batch) >= w.opts.BatchSize {
			return batch
		}
		// A queue smaller than the rest of the batch wakes the writer
		// when it is full, rather than dropping entries for the linger.
		want := min(w.opts.BatchSize-len(batch), cap(w.queue))
		w.want.Store(int64(want))
		if len(w.queue) >= want {
			// Queued before want was stored: that Enqueue may not have
			// signalled.
			continue
		}
		select {
		case <-w.full: // possibly a stale signal: fillBatch and look again
		case <-timer.C:
			return w.fillBatch(batch)
		case <-w.stop:
			return w.fillBatch(batch)
		}
	}
}

// drain writes everything queued now.
func (w *Writer) drain(batch []Entry) {
	for len(w.queue) > 0 {
		batch = w.fillBatch(batch[:0])
		w.write(batch)
	}
}

// write stores a batch, retrying while the error is Retryable and the log
// is open; a batch that fails is counted and logged without its contents.
func (w *Writer) write(batch []Entry) {
	if len(batch) == 0 {
		return
	}
	if w.gaveUp {
		w.failed.Add(uint64(len(batch)))
		return
	}
	if err := w.writeRetrying(batch); err != nil {
		w.failed.Add(uint64(len(batch)))
		w.opts.Logger.Warn("decision log write failed", "entries", len(batch), "err", err)
		if w.steps.Retryable(err) && w.closing() {
			// Closing with the database away: each try could wait a whole
			// operation timeout; count the rest lost instead of making
			// shutdown wait for every batch.
			w.gaveUp = true
		}
		return
	}
	w.written.Add(uint64(len(batch)))
}

// writeRetrying writes the batch, again and again with backoff while the
// error is Retryable, until the log closes.
func (w *Writer) writeRetrying(batch []Entry) error {
	wait := writeBackoffMin
	for {
		err := w.steps.Write(context.Background(), batch)
		if err == nil || !w.steps.Retryable(err) {
			return err
		}
		if wait == writeBackoffMin {
			w.opts.Logger.Warn("decision log: database unreachable, retrying the batch", "entries", len(batch), "err", err)
		}
		if !w.sleep(wait) {
			return err
		}
		wait = min(2*wait, writeBackoffMax)
	}
}

// closing reports whether Close has been called.
func (w *Writer) closing() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}

// sleep waits d, or reports false when the log is closing.
func (w *Writer) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.stop:
		return false
	}
}
