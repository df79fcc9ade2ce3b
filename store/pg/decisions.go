package pg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/decisionlog"
)

// DecisionLogOptions configure a DecisionLog: the SQLite log's options
// (zero values take the same defaults) and the name this replica writes.
type DecisionLogOptions struct {
	decisionlog.Options
	// Replica names the writer in each row (default: host name and pid).
	Replica string
}

// DecisionLog is the decision log in PostgreSQL, shared by every replica:
// each writes its own entries, any reads everyone's. It behaves as
// decisionlog.Log, with the same writer (Enqueue never blocks, one writer
// goroutine redacts and writes batches, here one COPY each), a pruner on
// a goroutine of its own, and Query, Recent and LevelSeries answering as
// the SQLite log does. Dropped, Failed and Written count this replica's
// entries. Unlike a local file, the server can be away for a while: the
// writer then retries its batch with backoff while new entries wait in the
// queue, and only what does not fit is dropped (and counted); Close with
// the server away makes one attempt and counts the rest as failed. Close
// does not close the DB.
type DecisionLog struct {
	*decisionlog.Writer
	db   *DB
	opts DecisionLogOptions
}

// OpenDecisionLog migrates the decision log's tables in db and starts its
// writer. Close stops the writer; it does not close db.
func OpenDecisionLog(ctx context.Context, db *DB, opts DecisionLogOptions) (*DecisionLog, error) {
	if err := MigrateParts(ctx, db, PartDecisions); err != nil {
		return nil, err
	}
	fillDecisionOptions(&opts)
	l := &DecisionLog{db: db, opts: opts}
	l.Writer = decisionlog.NewWriter(opts.Options, decisionlog.WriterSteps{
		Write: l.writeBatch, Prune: l.Prune, PruneApart: true, Retryable: retryDecisions,
	})
	return l, nil
}

// retryDecisions reports whether a write failed because the server cannot
// be reached (store.ErrUnavailable): the writer retries such a batch.
func retryDecisions(err error) bool { return errors.Is(err, store.ErrUnavailable) }

// fillDecisionOptions applies the SQLite log's defaults and names the
// replica.
func fillDecisionOptions(o *DecisionLogOptions) {
	o.Options.Fill()
	if o.Replica == "" {
		host, _ := os.Hostname()
		o.Replica = host + ":" + strconv.Itoa(os.Getpid())
	}
}

// writeBatch redacts a batch and copies it into the table.
func (l *DecisionLog) writeBatch(ctx context.Context, batch []decisionlog.Entry) error {
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
	return []any{e.Time.UnixMicro(), l.opts.Replica, Text(e.Source), Text(e.Agent), Text(e.Tool),
		Text(e.Summary), Text(e.Channel), Text(e.Session), Text(e.Level), Text(e.MatchedRule),
		e.LatencyMicros, req, Text(e.ShadowLevel), Text(e.ShadowRule)}, nil
}
