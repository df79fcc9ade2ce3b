package decisionlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/toolgate/toolgate/store/pg"
)

// PGOptions configure a PGLog: the SQLite log's options
// (zero values take the same defaults) and the name this replica writes.
type PGOptions struct {
	Options
	// Replica names the writer in each row (default: host name and pid).
	Replica string
}

// PGLog is the decision log in PostgreSQL, shared by every replica:
// each writes its own entries, any reads everyone's. It behaves as
// Log, with the same writer (Enqueue never blocks, one writer
// goroutine redacts and writes batches, here one COPY each), a pruner on
// a goroutine of its own, and Query, Recent and LevelSeries answering as
// the SQLite log does. Dropped, Failed and Written count this replica's
// entries. Unlike a local file, the server can be away for a while: the
// writer then retries its batch with backoff while new entries wait in the
// queue, and only what does not fit is dropped (and counted); Close with
// the server away makes one attempt and counts the rest as failed. Close
// does not close the DB.
type PGLog struct {
	*Writer
	db   *pg.DB
	opts PGOptions
}

// OpenPG migrates the decision log's tables in db and starts its
// writer. Close stops the writer; it does not close db.
func OpenPG(ctx context.Context, db *pg.DB, opts PGOptions) (*PGLog, error) {
	if err := pg.MigrateParts(ctx, db, pg.PartDecisions); err != nil {
		return nil, err
	}
	fillDecisionOptions(&opts)
	l := &PGLog{db: db, opts: opts}
	l.Writer = NewWriter(opts.Options, WriterSteps{
		Write: l.writeBatch, Prune: l.Prune, PruneApart: true, Retryable: retryDecisions,
	})
	return l, nil
}

// retryDecisions reports whether a write failed because the server cannot
// be reached (pg.ErrUnavailable): the writer retries such a batch.
func retryDecisions(err error) bool { return errors.Is(err, pg.ErrUnavailable) }

// fillDecisionOptions applies the SQLite log's defaults and names the
// replica.
func fillDecisionOptions(o *PGOptions) {
	o.Options.Fill()
	if o.Replica == "" {
		host, _ := os.Hostname()
		o.Replica = host + ":" + strconv.Itoa(os.Getpid())
	}
}

// writeBatch redacts a batch and copies it into the table.
func (l *PGLog) writeBatch(ctx context.Context, batch []Entry) error {
	rows, err := l.rows(batch)
	if err != nil {
		return err
	}
	return l.copyRows(ctx, rows)
}

// decisionCopyColumns are the columns one entry writes, in rowValues' order.
var decisionCopyColumns = []string{"ts", "replica", "source", "agent", "tool", "summary", "channel",
	"session", "level", "matched_rule", "latency_us", "request", "shadow_level", "shadow_rule"}

// rows prepares (and redacts) the column values of a batch.
func (l *PGLog) rows(batch []Entry) ([][]any, error) {
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
func (l *PGLog) rowValues(e *Entry) ([]any, error) {
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
	return []any{e.Time.UnixMicro(), l.opts.Replica, pg.Text(e.Source), pg.Text(e.Agent), pg.Text(e.Tool),
		pg.Text(e.Summary), pg.Text(e.Channel), pg.Text(e.Session), pg.Text(e.Level), pg.Text(e.MatchedRule),
		e.LatencyMicros, req, pg.Text(e.ShadowLevel), pg.Text(e.ShadowRule)}, nil
}
