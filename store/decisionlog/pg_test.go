package decisionlog

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

// openPGLog opens a decision log on db; t.Cleanup closes it.
func openPGLog(t *testing.T, db *pg.DB, opts PGOptions) *PGLog {
	t.Helper()
	l, err := OpenPG(context.Background(), db, opts)
	if err != nil {
		t.Fatalf("OpenPG: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func flushLog(t *testing.T, l *PGLog) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

func countDecisions(t *testing.T, db *pg.DB, where string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM decisions `+where, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPGDecisionLogReplicasShareOneTable: three replicas (pools of their own,
// started at once, so their migrations race) write concurrently; each reads
// every replica's entries, one id order, and the rows name their writer.
func TestPGDecisionLogReplicasShareOneTable(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	const replicas, each = 3, 200
	logs := make([]*PGLog, replicas)
	var wg sync.WaitGroup
	for i := range logs {
		db := dbtest.Open(t, dsn)
		wg.Go(func() {
			l, err := OpenPG(context.Background(), db, PGOptions{Replica: fmt.Sprintf("r%d", i)})
			if err != nil {
				t.Errorf("replica %d: %v", i, err)
				return
			}
			logs[i] = l
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i, l := range logs {
		t.Cleanup(func() { l.Close() })
		wg.Go(func() {
			for j := range each {
				l.Enqueue(Entry{Source: "check", Tool: "bash", Level: "allow", Session: fmt.Sprintf("r%d", i), Summary: fmt.Sprint(j)})
			}
		})
	}
	wg.Wait()
	for _, l := range logs {
		flushLog(t, l)
	}
	for i, l := range logs {
		if l.Written() != each || l.Failed() != 0 || l.Dropped() != 0 {
			t.Errorf("replica %d: written %d failed %d dropped %d, want %d 0 0", i, l.Written(), l.Failed(), l.Dropped(), each)
		}
		seen := 0
		var prev int64
		q := Query{Limit: MaxPage}
		for {
			page, err := l.Query(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page.Entries {
				if prev != 0 && e.ID >= prev {
					t.Fatalf("replica %d: id %d after %d, want newest first", i, e.ID, prev)
				}
				prev = e.ID
				seen++
			}
			if page.NextBefore == 0 {
				break
			}
			q.Before = page.NextBefore
		}
		if seen != replicas*each {
			t.Errorf("replica %d reads %d entries, want all %d", i, seen, replicas*each)
		}
		if n := countDecisions(t, logs[0].db, "WHERE replica = $1 AND session = $1", fmt.Sprintf("r%d", i)); n != each {
			t.Errorf("rows naming replica r%d as writer: %d, want %d", i, n, each)
		}
	}
}

// TestPGDecisionLogPruneOneReplicaAtATime: while another replica holds the
// prune lock, Prune does nothing and returns at once; when it is free,
// Prune deletes.
func TestPGDecisionLogPruneOneReplicaAtATime(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	clock := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	db := dbtest.Open(t, dsn)
	l := openPGLog(t, db, PGOptions{Options: Options{Now: clock.Now, Retention: time.Hour, PruneEvery: time.Hour}})
	for _, age := range []time.Duration{3 * time.Hour, 2 * time.Hour, time.Minute} {
		l.Enqueue(Entry{Time: clock.now.Add(-age), Tool: "bash", Level: "ask"})
	}
	flushLog(t, l)

	other := dbtest.Open(t, dsn)
	ctx := context.Background()
	tx, err := other.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", decisionPruneLockKey); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	n, err := l.Prune(ctx)
	if err != nil || n != 0 || countDecisions(t, db, "") != 3 {
		t.Errorf("prune while another replica prunes: %d deleted (err %v), %d rows; want 0, 3", n, err, countDecisions(t, db, ""))
	}
	// Waiting for the lock would last until the prune's one-minute timeout.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("prune waited %v for the lock; want it to skip at once", d)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	n, err = l.Prune(ctx)
	if err != nil || n != 2 || countDecisions(t, db, "") != 1 {
		t.Errorf("prune with the lock free: %d deleted (err %v), %d rows; want 2, 1", n, err, countDecisions(t, db, ""))
	}
}

// TestPGDecisionLogPrunesPeriodically: the prune goroutine applies MaxRows on
// its own.
func TestPGDecisionLogPrunesPeriodically(t *testing.T) {
	db := dbtest.Open(t, pgtest.NewDSN(t))
	l := openPGLog(t, db, PGOptions{Options: Options{MaxRows: 1, PruneEvery: 10 * time.Millisecond}})
	l.Enqueue(Entry{Tool: "a", Level: "ask"})
	l.Enqueue(Entry{Tool: "b", Level: "ask"})
	flushLog(t, l)
	pgtest.WaitFor(t, 10*time.Second, "periodic prune to one row", func() bool { return countDecisions(t, db, "") == 1 })
	page, err := l.Query(context.Background(), Query{})
	if err != nil || len(page.Entries) != 1 || page.Entries[0].Tool != "b" {
		t.Errorf("kept %+v (err %v), want the newest entry b", page.Entries, err)
	}
}

// TestPGDecisionLogBadTextKeepsTheBatch: a NUL byte or invalid UTF-8 in one
// entry (PostgreSQL text refuses both) must not lose the batch it is in.
func TestPGDecisionLogBadTextKeepsTheBatch(t *testing.T) {
	l := openPGLog(t, dbtest.Open(t, pgtest.NewDSN(t)), PGOptions{Options: Options{Linger: time.Second, BatchSize: 8}})
	for i := range 8 {
		e := Entry{Tool: "bash", Level: "allow", Summary: fmt.Sprint("ok ", i)}
		if i == 3 {
			e.Summary, e.Session, e.MatchedRule = "rm\x00 -rf", "s\xff\xfe", "rule\x00"
		}
		l.Enqueue(e)
	}
	flushLog(t, l)
	if l.Written() != 8 || l.Failed() != 0 {
		t.Fatalf("written %d failed %d, want 8 0", l.Written(), l.Failed())
	}
	page, err := l.Query(context.Background(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range page.Entries {
		if strings.HasPrefix(e.Summary, "rm") {
			found = true
			if e.Summary != "rm\uFFFD -rf" || e.Session != "s\uFFFD" || e.MatchedRule != "rule\uFFFD" {
				t.Errorf("stored %q %q %q, want the bad bytes as U+FFFD", e.Summary, e.Session, e.MatchedRule)
			}
		}
	}
	if !found {
		t.Error("the entry with bad text is missing")
	}
}

// TestPGDecisionLogNeverBlocks stalls the writer on a table lock another
// session holds: Enqueue keeps returning at once and counts what it drops,
// and what it accepted is written once the lock goes.
func TestPGDecisionLogNeverBlocks(t *testing.T) {
	const queue, batch, total = 4, 2, 200
	dsn := pgtest.NewDSN(t)
	db := dbtest.Open(t, dsn)
	l := openPGLog(t, db, PGOptions{Options: Options{QueueSize: queue, BatchSize: batch}})
	ctx := context.Background()
	locker, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE decisions IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	accepted := 0
	for range total {
		if l.Enqueue(Entry{Tool: "bash", Level: "allow"}) {
			accepted++
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("%d enqueues took %v with the writer stalled", total, d)
	}
	if got := int(l.Dropped()); got != total-accepted || got < total-queue-batch {
		t.Errorf("dropped %d of %d with the writer stalled; want %d (at least %d)", got, total, total-accepted, total-queue-batch)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	flushLog(t, l)
	if got := countDecisions(t, db, ""); got != accepted || l.Failed() != 0 {
		t.Errorf("rows after the stall: %d (failed %d), want the %d accepted", got, l.Failed(), accepted)
	}
}

// TestPGDecisionLogServerAway: entries enqueued while the server is stopped
// are written once it is back (the writer retries), and Close while it is
// away returns without hanging, counting what it could not write.
func TestPGDecisionLogServerAway(t *testing.T) {
	c := pgtest.Start(t)
	db, err := pg.Open(context.Background(), c.NewDatabase(t), pg.Options{OpTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := OpenPG(context.Background(), db, PGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		l.Enqueue(Entry{Tool: "bash", Level: "deny"})
	}
	time.Sleep(500 * time.Millisecond) // the writer has tried and failed at least once
	if l.Written() != 0 || l.Failed() != 0 {
		t.Fatalf("with the server away: written %d failed %d, want 0 0 (retrying)", l.Written(), l.Failed())
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	flushLog(t, l)
	if l.Written() != 20 || l.Failed() != 0 || countDecisions(t, db, "") != 20 {
		t.Errorf("after the server came back: written %d failed %d rows %d, want 20 0 20", l.Written(), l.Failed(), countDecisions(t, db, ""))
	}

	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	l.Enqueue(Entry{Tool: "bash", Level: "deny"})
	closed := make(chan struct{})
	go func() { l.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(15 * time.Second):
		t.Fatal("Close hangs while the server is away")
	}
	if l.Failed() != 1 {
		t.Errorf("failed after Close with the server away: %d, want 1", l.Failed())
	}
}

// TestPGDecisionLogCloseWhenServerSilent: Close with the server cut off
// silently (no refusal, no answer: every try waits out the operation
// timeout) tries once and counts the rest as failed, so that shutdown of a
// cut-off replica does not wait a timeout per queued batch.
func TestPGDecisionLogCloseWhenServerSilent(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := startSilentProxy(t, u.Host)
	u.Host = p.addr()
	const opTimeout = time.Second
	db, err := pg.Open(context.Background(), u.String(), pg.Options{OpTimeout: opTimeout})
	if err != nil {
		t.Fatal(err)
	}
	// The pool waits up to 15 s for each connection to close over a silent
	// path: end the proxy's connections first.
	defer func() { p.close(); db.Close() }()
	l, err := OpenPG(context.Background(), db, PGOptions{Options: Options{BatchSize: 2, Linger: -1}})
	if err != nil {
		t.Fatal(err)
	}
	l.Enqueue(Entry{Tool: "bash", Level: "allow"})
	flushLog(t, l)
	p.cut()
	const queued = 40
	for range queued {
		l.Enqueue(Entry{Tool: "bash", Level: "allow"})
	}
	start := time.Now()
	l.Close()
	if d := time.Since(start); d > 5*opTimeout {
		t.Errorf("Close took %v with %d batches queued and the server silent; want about one operation timeout (%v)", d, queued/2, opTimeout)
	}
	if l.Failed() != queued || l.Written() != 1 {
		t.Errorf("written %d failed %d, want 1 %d", l.Written(), l.Failed(), queued)
	}
}

// silentProxy forwards TCP connections to a server until cut; then it keeps
// every connection open without passing a byte either way and accepts new
// ones without answering, as a silently partitioned network does.
type silentProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	isCut  bool
	open   []net.Conn
}

func startSilentProxy(t *testing.T, target string) *silentProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &silentProxy{ln: ln, target: target}
	t.Cleanup(p.close)
	go p.serve()
	return p
}

func (p *silentProxy) addr() string { return p.ln.Addr().String() }

func (p *silentProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.open = append(p.open, c)
		cut := p.isCut
		p.mu.Unlock()
		if cut {
			continue // held open, never answered
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.open = append(p.open, up)
		p.mu.Unlock()
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

// pipe copies from src to dst until either fails or the proxy is cut.
func (p *silentProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		cut := p.isCut
		p.mu.Unlock()
		if err != nil || cut {
			return
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// cut stops all traffic; the client side of each connection stays open.
func (p *silentProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isCut = true
}

func (p *silentProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.open {
		c.Close()
	}
}
