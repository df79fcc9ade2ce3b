package decisionlog

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/store/pg"
)

// decisionPruneLockKey is the pg_try_advisory_xact_lock key of pruning
// ("tgprune!" in ASCII): one replica prunes at a time and the others skip
// their turn, since the rows are everyone's.
const decisionPruneLockKey int64 = 0x7467_7072_756e_6521

// decisionPruneTimeout bounds one Prune.
const decisionPruneTimeout = time.Minute

// copyRows writes prepared rows with one COPY, which is atomic: the batch
// is written whole or not at all.
func (l *PGLog) copyRows(ctx context.Context, rows [][]any) error {
	octx, cancel := l.db.Op(ctx)
	defer cancel()
	_, err := l.db.Pool().CopyFrom(octx, pgx.Identifier{"decisions"}, decisionCopyColumns, pgx.CopyFromRows(rows))
	return l.db.Wrap(ctx, err, "write decisions")
}

// Prune deletes entries older than the retention and, beyond MaxRows, the
// oldest ones, and returns the number deleted. Every replica's log calls it
// every PruneEvery; the first to take the prune lock prunes and the others
// return 0 at once.
func (l *PGLog) Prune(ctx context.Context) (int64, error) {
	// A first prune of a large table may take longer than one operation.
	octx, cancel := context.WithTimeout(ctx, decisionPruneTimeout)
	defer cancel()
	cutoff := l.opts.Now().Add(-l.opts.Retention).UnixMicro()
	var deleted int64
	err := pgx.BeginFunc(octx, l.db.Pool(), func(tx pgx.Tx) error {
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

// pgSQL writes PostgreSQL's conditions; filter text goes through pg.Text
// as stored text does (the server refuses a NUL parameter).
var pgSQL = dialect{param: func(i int) string { return "$" + strconv.Itoa(i) }, strpos: "strpos", text: pg.Text}

// pgWhere builds the WHERE clause of q with placeholders numbered from
// $first.
func pgWhere(q Query, first int) (string, []any) {
	sqls, args := q.condSQL(pgSQL, first)
	if len(sqls) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(sqls, " AND "), args
}

// Query returns one page of every replica's entries matching q, newest
// first. The full request is not included.
func (l *PGLog) Query(ctx context.Context, q Query) (Page, error) {
	q.Limit = q.pageLimit()
	where, args := pgWhere(q, 1)
	n := len(args)
	args = append(args, q.Limit+1, max(q.Offset, 0))
	sql := `SELECT ` + decisionColumns + ` FROM decisions` + where +
		` ORDER BY id DESC LIMIT $` + strconv.Itoa(n+1) + ` OFFSET $` + strconv.Itoa(n+2)
	entries, err := l.scan(ctx, "query decisions", false, sql, args...)
	if err != nil {
		return Page{}, err
	}
	return newPage(entries, q.Limit), nil
}

// Recent returns up to n of the newest entries (of any replica) that carry
// their full request (logged with --log-full-args), newest first.
func (l *PGLog) Recent(ctx context.Context, n int) ([]Entry, error) {
	var limit *int // NULL: no limit, as SQLite reads a negative LIMIT
	if n >= 0 {
		limit = &n
	}
	return l.scan(ctx, "recent decisions", true, `SELECT `+decisionColumns+` FROM decisions
		WHERE request IS NOT NULL ORDER BY id DESC LIMIT $1`, limit)
}

// scan runs a SELECT of decisionColumns and reads its entries.
func (l *PGLog) scan(ctx context.Context, what string, withRequest bool, sql string, args ...any) ([]Entry, error) {
	octx, cancel := l.db.Op(ctx)
	defer cancel()
	rows, err := l.db.Pool().Query(octx, sql, args...)
	if err != nil {
		return nil, l.db.Wrap(ctx, err, what)
	}
	out := []Entry{}
	var e Entry
	var ts int64
	var req *string
	_, err = pgx.ForEachRow(rows, entryDests(&e, &ts, &req), func() error {
		got, err := readEntry(e, ts, req, withRequest)
		out = append(out, got)
		return err
	})
	if err != nil {
		return nil, l.db.Wrap(ctx, err, what)
	}
	return out, nil
}

// LevelSeries counts every replica's entries matching q (its paging
// ignored) by level in n equal buckets from q.Since to q.Until (defaults:
// the last 24 hours), as the SQLite log does.
func (l *PGLog) LevelSeries(ctx context.Context, q Query, n int) ([]LevelBucket, error) {
	q, width, buckets := q.Series(n, l.opts.Now)
	where, args := pgWhere(q, 3)
	octx, cancel := l.db.Op(ctx)
	defer cancel()
	rows, err := l.db.Pool().Query(octx, `SELECT (ts - $1::bigint) / $2::bigint, level, count(*) FROM decisions`+where+
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
