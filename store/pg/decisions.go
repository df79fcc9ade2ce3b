package pg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/decisionlog"
)

// PartDecisions is the schema part of the decision log.
const PartDecisions = "decisionlog"

// decisionMigrations are the decision log's schema steps. ts is unix
// microseconds as in the SQLite log, so that filters, cursors and buckets
// compute the same numbers; id comes from one sequence that every replica
// draws from, so the newest-first order and the Before cursor span all
// replicas; replica names the writer.
var decisionMigrations = []Migration{{Version: 1, Name: "decision log", SQL: `
CREATE TABLE decisions (
	id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	ts           bigint NOT NULL,
	replica      text   NOT NULL DEFAULT '',
	source       text   NOT NULL,
	agent        text   NOT NULL DEFAULT 'rest',
	tool         text   NOT NULL,
	summary      text   NOT NULL,
	channel      text   NOT NULL DEFAULT '',
	session      text   NOT NULL DEFAULT '',
	level        text   NOT NULL,
	matched_rule text   NOT NULL DEFAULT '',
	latency_us   bigint NOT NULL DEFAULT 0,
	request      text
);
COMMENT ON COLUMN decisions.ts IS 'unix microseconds';
COMMENT ON COLUMN decisions.request IS 'redacted full call as JSON, only with --log-full-args';
CREATE INDEX decisions_ts ON decisions (ts);
CREATE INDEX decisions_tool ON decisions (tool, id);
CREATE INDEX decisions_session ON decisions (session, id);
CREATE INDEX decisions_agent ON decisions (agent, id);
`}}

// DecisionLogOptions configure a DecisionLog: the SQLite log's options
// (zero values take the same defaults) and the name this replica writes.
type DecisionLogOptions struct {
	decisionlog.Options
	// Replica names the writer in each row (default: host name and pid).
	Replica string
}

// Retry backoff of the writer while the database cannot be reached.
const (
	writeBackoffMin = 100 * time.Millisecond
	writeBackoffMax = 2 * time.Second
)

// DecisionLog is the decision log in PostgreSQL, shared by every replica:
// each writes its own entries, any reads everyone's. It behaves as
// decisionlog.Log: Enqueue never blocks, one writer goroutine redacts and
// writes batches (one COPY each), another goroutine prunes, and Query,
// Recent and LevelSeries answer as the SQLite log does. Unlike a local
// file, the server can be away for a while: the writer then retries its
// batch with backoff while new entries wait in the queue, and only what
// does not fit is dropped (and counted).
type DecisionLog struct {
	db      *DB
	opts    DecisionLogOptions
	queue   chan decisionlog.Entry
	flushes chan chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	// pruneDone is closed when pruneLoop has returned.
	pruneDone chan struct{}

	// gaveUp is set by the writer when a write failed for want of the
	// server while closing: what remains is counted as failed, unwritten.
	gaveUp bool

	dropped atomic.Uint64
	failed  atomic.Uint64
	written atomic.Uint64
}

// OpenDecisionLog migrates the decision log's tables in db and starts its
// writer. Close stops the writer; it does not close db.
func OpenDecisionLog(ctx context.Context, db *DB, opts DecisionLogOptions) (*DecisionLog, error) {
	if err := Migrate(ctx, db, PartDecisions, decisionMigrations); err != nil {
		return nil, err
	}
	fillDecisionOptions(&opts)
	l := &DecisionLog{
		db: db, opts: opts,
		queue:     make(chan decisionlog.Entry, opts.QueueSize),
		flushes:   make(chan chan struct{}),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		pruneDone: make(chan struct{}),
	}
	go l.run()
	go l.pruneLoop()
	return l, nil
}

// fillDecisionOptions applies the SQLite log's defaults and names the
// replica.
func fillDecisionOptions(o *DecisionLogOptions) {
	o.Options.Fill()
	if o.Replica == "" {
		host, _ := os.Hostname()
		o.Replica = host + ":" + strconv.Itoa(os.Getpid())
	}
}

// Enqueue hands an entry to the writer without waiting. When the queue is
// full the entry is dropped, counted by Dropped, and false is returned.
func (l *DecisionLog) Enqueue(e decisionlog.Entry) bool {
	select {
	case l.queue <- e:
		return true
	default:
		l.dropped.Add(1)
		return false
	}
}

// Dropped is the number of entries this replica dropped because its queue
// was full.
func (l *DecisionLog) Dropped() uint64 { return l.dropped.Load() }

// Failed is the number of entries this replica lost to write errors.
func (l *DecisionLog) Failed() uint64 { return l.failed.Load() }

// Written is the number of entries this replica wrote.
func (l *DecisionLog) Written() uint64 { return l.written.Load() }

// QueueLen is the number of entries waiting for the writer.
func (l *DecisionLog) QueueLen() int { return len(l.queue) }

// Flush waits until every entry enqueued before the call is written (or
// lost to an error), or ctx ends.
func (l *DecisionLog) Flush(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case l.flushes <- ack:
	case <-l.done:
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

// Close writes what is queued and stops the writer; when the server cannot
// be reached it makes one attempt and counts the rest as failed. It does
// not close the DB.
func (l *DecisionLog) Close() error {
	l.once.Do(func() { close(l.stop) })
	<-l.done
	<-l.pruneDone
	return nil
}

// pruneLoop prunes every PruneEvery until the log closes. It runs apart
// from the writer (PostgreSQL lets a DELETE and a COPY run at once), so a
// long prune, or one waiting on a server that does not answer, never holds
// up writes; closing cancels a prune under way.
func (l *DecisionLog) pruneLoop() {
	defer close(l.pruneDone)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-l.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	tick := time.NewTicker(l.opts.PruneEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if _, err := l.Prune(ctx); err != nil && ctx.Err() == nil {
				l.opts.Logger.Warn("decision log prune failed", "err", err)
			}
		case <-l.stop:
			return
		}
	}
}

// run is the writer goroutine: batches writes.
func (l *DecisionLog) run() {
	defer close(l.done)
	batch := make([]decisionlog.Entry, 0, l.opts.BatchSize)
	for {
		select {
		case e := <-l.queue:
			batch = l.linger(l.fillBatch(append(batch[:0], e)))
			l.write(batch)
		case ack := <-l.flushes:
			l.drain(batch)
			close(ack)
		case <-l.stop:
			l.drain(batch)
			return
		}
	}
}

// fillBatch adds what is already queued, up to BatchSize, without waiting.
func (l *DecisionLog) fillBatch(batch []decisionlog.Entry) []decisionlog.Entry {
	for len(batch) < l.opts.BatchSize {
		select {
		case e := <-l.queue:
			batch = append(batch, e)
		default:
			return batch
		}
	}
	return batch
}

// linger waits up to Linger for more entries, until the batch is full or
// the log is closing.
func (l *DecisionLog) linger(batch []decisionlog.Entry) []decisionlog.Entry {
	if l.opts.Linger < 0 || len(batch) >= l.opts.BatchSize {
		return batch
	}
	timer := time.NewTimer(l.opts.Linger)
	defer timer.Stop()
	for len(batch) < l.opts.BatchSize {
		select {
		case e := <-l.queue:
			batch = append(batch, e)
		case <-timer.C:
			return batch
		case <-l.stop:
			return batch
		}
	}
	return batch
}

// drain writes everything queued now.
func (l *DecisionLog) drain(batch []decisionlog.Entry) {
	for len(l.queue) > 0 {
		batch = l.fillBatch(batch[:0])
		l.write(batch)
	}
}

// write copies a batch into the table. While the server cannot be reached
// it retries with backoff until the log closes; any other error (or one
// at closing time) loses the batch, which is counted and logged without
// its contents.
func (l *DecisionLog) write(batch []decisionlog.Entry) {
	if len(batch) == 0 {
		return
	}
	if l.gaveUp {
		l.failed.Add(uint64(len(batch)))
		return
	}
	rows, err := l.rows(batch)
	if err == nil {
		err = l.copyRetrying(rows)
	}
	if err != nil {
		l.failed.Add(uint64(len(batch)))
		l.opts.Logger.Warn("decision log write failed", "entries", len(batch), "err", err)
		if errors.Is(err, store.ErrUnavailable) && l.closing() {
			// Closing with the server away: each try could wait a whole
			// operation timeout; count the rest lost instead of making
			// shutdown wait for every batch.
			l.gaveUp = true
		}
		return
	}
	l.written.Add(uint64(len(batch)))
}

// closing reports whether Close has been called.
func (l *DecisionLog) closing() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// copyRetrying copies rows, again and again with backoff while the server
// cannot be reached, until the log closes.
func (l *DecisionLog) copyRetrying(rows [][]any) error {
	wait := writeBackoffMin
	for {
		err := l.copyRows(rows)
		if err == nil || !errors.Is(err, store.ErrUnavailable) {
			return err
		}
		if wait == writeBackoffMin {
			l.opts.Logger.Warn("decision log: database unreachable, retrying the batch", "entries", len(rows), "err", err)
		}
		if !l.sleep(wait) {
			return err
		}
		wait = min(2*wait, writeBackoffMax)
	}
}

// sleep waits d, or reports false when the log is closing.
func (l *DecisionLog) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.stop:
		return false
	}
}

// decisionCopyColumns are the columns one entry writes, in rowValues' order.
var decisionCopyColumns = []string{"ts", "replica", "source", "agent", "tool", "summary", "channel",
	"session", "level", "matched_rule", "latency_us", "request"}

// rows prepares (and redacts) the column values of a batch.
func (l *DecisionLog) rows(batch []decisionlog.Entry) ([][]any, error) {
	rows := make([][]any, len(batch))
	for i := range batch {
		row, err := l.rowValues(&batch[i])
		if err != nil {
			return nil, err
		}
		rows[i] = row
	}
	return rows, nil
}

// rowValues are the column values of one entry, redacted as the SQLite log
// does: the summary and the full request come from Call here, on the
// writer, not on the request path.
func (l *DecisionLog) rowValues(e *decisionlog.Entry) ([]any, error) {
	e.Prepare()
	var req *string
	if e.Request != nil {
		b, err := json.Marshal(e.Request)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		s := string(b)
		req = &s
	}
	if e.Time.IsZero() {
		e.Time = l.opts.Now()
	}
	if e.Agent == "" {
		e.Agent = "rest"
	}
	return []any{e.Time.UnixMicro(), l.opts.Replica, pgText(e.Source), pgText(e.Agent), pgText(e.Tool),
		pgText(e.Summary), pgText(e.Channel), pgText(e.Session), pgText(e.Level), pgText(e.MatchedRule),
		e.LatencyMicros, req}, nil
}

// pgText is s as a PostgreSQL text value can hold it: a NUL byte or a byte
// that is not UTF-8 becomes U+FFFD. The server refuses both, and one
// agent's NUL in a tool argument (JSON "\u0000" decodes to it) must not
// cost the whole batch it shares with other calls. SQLite keeps such bytes;
// this is the one place the two logs can answer differently.
func pgText(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
