package pg

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/store/decisionlog"
)

// decisionPruneLockKey is the pg_try_advisory_xact_lock key of pruning
// ("tgprune!" in ASCII): one replica prunes at a time and the others skip
// their turn, since the rows are everyone's.
const decisionPruneLockKey int64 = 0x7467_7072_756e_6521

// decisionPruneTimeout bounds one Prune.
const decisionPruneTimeout = time.Minute

// copyRows writes prepared rows with one COPY, which is atomic: the batch
// is written whole or not at all.
func (l *DecisionLog) copyRows(ctx context.Context, rows [][]any) error {
	octx, cancel := l.db.Op(ctx)
	defer cancel()
	_, err := l.db.pool.CopyFrom(octx, pgx.Identifier{"decisions"}, decisionCopyColumns, pgx.CopyFromRows(rows))
	return l.db.Wrap(ctx, err, "write decisions")
}

// Prune deletes entries older than the retention and, beyond MaxRows, the
// oldest ones, and returns the number deleted. Every replica's log calls it
// every PruneEvery; the first to take the prune lock prunes and the others
// return 0 at once.
func (l *DecisionLog) Prune(ctx context.Context) (int64, error) {
	// A first prune of a large table may take longer than one operation.
	octx, cancel := context.WithTimeout(ctx, decisionPruneTimeout)
	defer cancel()
	cutoff := l.opts.Now().Add(-l.opts.Retention).UnixMicro()
	var deleted int64
	err := pgx.BeginFunc(octx, l.db.pool, func(tx pgx.Tx) error {
		var mine bool
		if err := tx.QueryRow(octx, "SELECT pg_try_advisory_xact_lock($1)", decisionPruneLockKey).Scan(&mine); err != nil {
			return err
		}
		if !mine {
			return nil
		}
		tag, err := tx.Exec(octx, "DELETE FROM decisions WHERE ts < $1", cutoff)
		if err != nil {
			return fmt.Errorf("by age: %w", err)
		}
		deleted = tag.RowsAffected()
		tag, err = tx.Exec(octx, `DELETE FROM decisions WHERE id <= (
			SELECT id FROM decisions ORDER BY id DESC LIMIT 1 OFFSET $1)`, l.opts.MaxRows)
		if err != nil {
			return fmt.Errorf("by count: %w", err)
		}
		deleted += tag.RowsAffected()
		return nil
	})
	if err != nil {
		return 0, l.db.Wrap(ctx, err, "prune decisions")
	}
	return deleted, nil
}

// decisionWhere builds the WHERE clause of q (decisionlog.Query.Conds,
// the SQLite log's conditions) with placeholders numbered from $first.
// Filter text goes through Text as stored text does: the server refuses
// a NUL parameter.
func decisionWhere(q decisionlog.Query, first int) (string, []any) {
	conds := q.Conds()
	if len(conds) == 0 {
		return "", nil
	}
	sqls := make([]string, len(conds))
	args := make([]any, len(conds))
	for i, c := range conds {
		p := "$" + strconv.Itoa(first+i)
		sqls[i] = c.Column + " " + c.Op + " " + p
		switch c.Op {
		case decisionlog.OpContains:
			sqls[i] = "strpos(" + c.Column + ", " + p + ") > 0"
		case decisionlog.OpPrefix:
			sqls[i] = "strpos(" + c.Column + ", " + p + ") = 1"
		}
		args[i] = c.Arg
		if s, ok := c.Arg.(string); ok {
			args[i] = Text(s)
		}
	}
	return " WHERE " + strings.Join(sqls, " AND "), args
}

const pgDecisionColumns = `id, ts, source, agent, tool, summary, channel, session, level, matched_rule, latency_us, request, shadow_level, shadow_rule`

// Query returns one page of every replica's entries matching q, newest
// first. The full request is not included.
func (l *DecisionLog) Query(ctx context.Context, q decisionlog.Query) (decisionlog.Page, error) {
	if q.Limit <= 0 {
		q.Limit = 50
	}
	q.Limit = min(q.Limit, decisionlog.MaxPage)
	where, args := decisionWhere(q, 1)
	n := len(args)
	args = append(args, q.Limit+1, max(q.Offset, 0))
	sql := `SELECT ` + pgDecisionColumns + ` FROM decisions` + where +
		` ORDER BY id DESC LIMIT $` + strconv.Itoa(n+1) + ` OFFSET $` + strconv.Itoa(n+2)
	entries, err := l.scan(ctx, "query decisions", false, sql, args...)
	if err != nil {
		return decisionlog.Page{}, err
	}
	page := decisionlog.Page{Entries: entries}
	if len(entries) > q.Limit {
		page.Entries = entries[:q.Limit]
		page.NextBefore = page.Entries[q.Limit-1].ID
	}
	return page, nil
}

// Recent returns up to n of the newest entries (of any replica) that carry
// their full request (logged with --log-full-args), newest first.
func (l *DecisionLog) Recent(ctx context.Context, n int) ([]decisionlog.Entry, error) {
	var limit *int // NULL: no limit, as SQLite reads a negative LIMIT
	if n >= 0 {
		limit = &n
	}
	return l.scan(ctx, "recent decisions", true, `SELECT `+pgDecisionColumns+` FROM decisions
		WHERE request IS NOT NULL ORDER BY id DESC LIMIT $1`, limit)
}

// scan runs a SELECT of pgDecisionColumns and reads its entries.
func (l *DecisionLog) scan(ctx context.Context, what string, withRequest bool, sql string, args ...any) ([]decisionlog.Entry, error) {
	octx, cancel := l.db.Op(ctx)
	defer cancel()
	rows, err := l.db.pool.Query(octx, sql, args...)
	if err != nil {
		return nil, l.db.Wrap(ctx, err, what)
	}
	out := []decisionlog.Entry{}
	var e decisionlog.Entry
	var ts int64
	var req *string
	_, err = pgx.ForEachRow(rows, []any{&e.ID, &ts, &e.Source, &e.Agent, &e.Tool, &e.Summary, &e.Channel,
		&e.Session, &e.Level, &e.MatchedRule, &e.LatencyMicros, &req, &e.ShadowLevel, &e.ShadowRule}, func() error {
		got := e
		got.Time = time.UnixMicro(ts).UTC()
		if withRequest && req != nil {
			var r decisionlog.Request
			if err := json.Unmarshal([]byte(*req), &r); err != nil {
				return fmt.Errorf("decision %d: decode request: %w", got.ID, err)
			}
			got.Request = &r
		}
		out = append(out, got)
		return nil
	})
	if err != nil {
		return nil, l.db.Wrap(ctx, err, what)
	}
	return out, nil
}

// LevelSeries counts every replica's entries matching q (its paging
// ignored) by level in n equal buckets from q.Since to q.Until (defaults:
// the last 24 hours), as the SQLite log does.
func (l *DecisionLog) LevelSeries(ctx context.Context, q decisionlog.Query, n int) ([]decisionlog.LevelBucket, error) {
	q, width, buckets := q.Series(n, l.opts.Now)
	where, args := decisionWhere(q, 3)
	octx, cancel := l.db.Op(ctx)
	defer cancel()
	rows, err := l.db.pool.Query(octx, `SELECT (ts - $1::bigint) / $2::bigint, level, count(*) FROM decisions`+where+
		` GROUP BY 1, 2`, append([]any{q.Since.UnixMicro(), width}, args...)...)
	if err != nil {
		return nil, l.db.Wrap(ctx, err, "decision series")
	}
	var i, c int64
	var level string
	_, err = pgx.ForEachRow(rows, []any{&i, &level, &c}, func() error {
		if i >= 0 && i < int64(len(buckets)) {
			buckets[i].Counts[level] += c
		}
		return nil
	})
	if err != nil {
		return nil, l.db.Wrap(ctx, err, "decision series")
	}
	return buckets, nil
}
