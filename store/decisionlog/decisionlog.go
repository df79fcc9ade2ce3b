// Package decisionlog is the decision log in the embedded SQLite file
// decisions.db: every decision of /api/v1/evaluate, /api/v1/check and the
// hooks, written off the request path in batches, redacted, pruned by age
// and count, and read back by the API and the pages. Its database holds
// only its own tables and migrations.
package decisionlog

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/defaults"
	"github.com/toolgate/toolgate/store/sqlite"
)

// Entry is one logged decision of /api/v1/evaluate or /api/v1/check.
type Entry struct {
	ID   int64     `json:"id"`
	Time time.Time `json:"time"`
	// Source is the route that decided: "evaluate" or "check".
	Source string `json:"source"`
	// Agent is the runtime the call came from: claude-code, codex, gemini,
	// jiuwenswarm or rest (also every entry logged before agents were).
	Agent       string `json:"agent"`
	Tool        string `json:"tool_name"`
	Summary     string `json:"summary"`
	Channel     string `json:"channel_id"`
	Session     string `json:"session_id"`
	Level       string `json:"level"`
	MatchedRule string `json:"matched_rule"`
	// LatencyMicros is the time from the request's arrival to the decision.
	LatencyMicros int64 `json:"latency_us"`
	// ShadowLevel and ShadowRule are what the policy would have decided
	// with its shadow rules enforced, set only when that level differs
	// from Level (a call a shadow rule would change).
	ShadowLevel string `json:"shadow_level,omitempty"`
	ShadowRule  string `json:"shadow_rule,omitempty"`
	// Request is the whole call with its arguments redacted; it is kept only
	// when full arguments are logged (--log-full-args) and feeds the preview.
	Request *Request `json:"-"`

	// Call is the raw call as decided. When set, the writer has it fill the
	// redacted Summary (if empty), the shadow fields and, with FullArgs, the
	// redacted Request, so that redaction costs nothing on the request path.
	// The caller must not change the call after Enqueue.
	Call     Call `json:"-"`
	FullArgs bool `json:"-"`
}

// Call is a decided call the log's writer prepares an entry from, off the
// request path (logcall.Of makes one from the engine's call). The log does
// not read calls itself: that takes the engine, which storage does not
// import.
type Call interface {
	// Prepare sets e's Summary when it is empty, its ShadowLevel and
	// ShadowRule when the policy that decided has shadow rules that would
	// decide otherwise, and its Request when e.FullArgs.
	Prepare(e *Entry)
}

// Request is a logged call with its arguments redacted: the fields of the
// call that deciding it again needs, in the JSON the log stores.
type Request struct {
	ToolName  string         `json:"tool_name"`
	ToolArgs  map[string]any `json:"tool_args"`
	ChannelID string         `json:"channel_id,omitempty"`
	Workspace string         `json:"workspace,omitempty"`
	Scope     *Scope         `json:"scope,omitempty"`
}

// Scope is a logged digital-persona call's scope, as the call had it.
type Scope struct {
	AvatarMode         bool   `json:"avatar_mode"`
	GroupDigitalAvatar bool   `json:"group_digital_avatar"`
	PrincipalUserID    string `json:"principal_user_id"`
}

// Agents are the agents a decision can come from (Entry's
// Agent), in the order the pages list them.
var Agents = []string{"claude-code", "codex", "gemini", "jiuwenswarm", "rest"}

// Prepare fills the redacted fields derived from Call and clears Call. The
// writer of a log (the SQLite or the PostgreSQL one) calls it, off the request path.
func (e *Entry) Prepare() {
	if e.Call == nil {
		return
	}
	e.Call.Prepare(e)
	e.Call = nil
}

// Options configure a Log; zero values take the defaults.
type Options struct {
	// QueueSize bounds the entries waiting for the writer (default 8192);
	// when full, new entries are dropped and counted.
	QueueSize int
	// BatchSize is the most entries written in one transaction (default 512;
	// SQLite's log 1024, see sqliteBatchSize).
	BatchSize int
	// Linger is how long the writer waits for a batch to fill once an entry
	// arrives (default 20ms, SQLite's log 100ms; negative: not at all). One
	// commit per burst instead of one per decision keeps SQLite's fsyncs off
	// the CPU budget.
	Linger time.Duration
	// Retention is how long entries are kept (default 720h); MaxRows is the
	// most kept (default 1,000,000). Both are applied every PruneEvery
	// (default 1m).
	Retention  time.Duration
	MaxRows    int64
	PruneEvery time.Duration
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Fill sets the defaults of the zero fields (also used by the PostgreSQL log).
func (o *Options) Fill() {
	defaults.Positive(&o.QueueSize, 8192)
	defaults.Positive(&o.BatchSize, 512)
	if o.Linger == 0 {
		o.Linger = 20 * time.Millisecond
	}
	defaults.Positive(&o.Retention, 720*time.Hour)
	defaults.Positive(&o.MaxRows, 1_000_000)
	defaults.Positive(&o.PruneEvery, time.Minute)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Log is the decision log in SQLite. Its Writer (Enqueue, Flush,
// Dropped, Failed, Written, QueueLen) never blocks a decision: one writer
// goroutine inserts the entries in batches, one transaction each, so a
// slow disk never slows a decision.
type Log struct {
	*Writer
	db   *sql.DB
	opts Options
	// owned is the database Open opened, closed by Close.
	owned *sqlite.DB

	// inserts are the prepared INSERTs of insertRows>>i entries (see
	// insertChunk), each with every column bound (full) or only the lean
	// ones (see leanRow); only the writer goroutine uses them, and rows,
	// the values of a chunk.
	inserts [2][insertSizes]*sql.Stmt
	rows    [][insertColumns]any
	// marks are the minutes of the batch being written and their ids,
	// stored by markMinutes, prepared once.
	marks       []minuteMark
	markMinutes *sql.Stmt
}

// decisionSchema is the decisions table: migration 2.
const decisionSchema = `
CREATE TABLE decisions (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	ts           INTEGER NOT NULL, -- unix microseconds
	source       TEXT NOT NULL,
	tool         TEXT NOT NULL,
	summary      TEXT NOT NULL,
	channel      TEXT NOT NULL DEFAULT '',
	session      TEXT NOT NULL DEFAULT '',
	level        TEXT NOT NULL,
	matched_rule TEXT NOT NULL DEFAULT '',
	latency_us   INTEGER NOT NULL DEFAULT 0,
	request      TEXT -- redacted full call, only with --log-full-args
);
CREATE INDEX decisions_ts ON decisions(ts);
CREATE INDEX decisions_tool ON decisions(tool, id);
CREATE INDEX decisions_session ON decisions(session, id);
`

// decisionAgentSchema adds the agent of each decision: migration 3. Rows
// logged before it came from the REST routes, hence the default.
const decisionAgentSchema = `
ALTER TABLE decisions ADD COLUMN agent TEXT NOT NULL DEFAULT 'rest';
CREATE INDEX decisions_agent ON decisions(agent, id);
`

// decisionShadowSchema adds what the shadow rules would have decided:
// migration 4. Rows logged before it have none.
const decisionShadowSchema = `
ALTER TABLE decisions ADD COLUMN shadow_level TEXT NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN shadow_rule TEXT NOT NULL DEFAULT '';
`

// decisionSessionSchema makes the session index partial: migration 5. Most
// decisions have no session (REST evaluate), no query asks for the empty
// session, and a row left out of an index costs the writer nothing for it
// (BENCHMARKS.md "Seventh round"). Queries by session say session <> ”
// too (where), so that SQLite may use it.
const decisionSessionSchema = `
DROP INDEX decisions_session;
CREATE INDEX decisions_session ON decisions(session, id) WHERE session <> '';
`

// decisionMinutesSchema replaces the time index by a table of minutes:
// migration 6. Each minute in which decisions were logged (ts / 60,000,000,
// towards zero) keeps the smallest and largest id logged with a time in
// it, so that a time range is a range of ids (the table's rowid) found in
// a table of one row per minute, not an index of one entry per decision
// (its insert was a seventh of the writer's CPU, BENCHMARKS.md "Ninth
// round"). The queries keep their exact ts conditions: a decision logged
// late (a check that waited for an answer) only widens its minute's range.
const decisionMinutesSchema = `
CREATE TABLE decisions_minutes (
	minute   INTEGER PRIMARY KEY, -- ts / 60000000
	first_id INTEGER NOT NULL,
	last_id  INTEGER NOT NULL
);
INSERT INTO decisions_minutes (minute, first_id, last_id)
	SELECT ts / 60000000, min(id), max(id) FROM decisions GROUP BY 1;
DROP INDEX decisions_ts;
`

// markUnmarked adds to decisions_minutes the entries logged after its
// newest id without a minute: those a toolgate from before migration 6
// wrote when it opened this file after a newer one had migrated it (it
// records the migrations it knows and goes on writing). A time range
// would miss them otherwise. Ids only grow, so they are all above the
// newest id marked.
const markUnmarked = `INSERT INTO decisions_minutes (minute, first_id, last_id)
	SELECT ts / 60000000, min(id), max(id) FROM decisions
	WHERE id > (SELECT coalesce(max(last_id), 0) FROM decisions_minutes) GROUP BY 1
	ON CONFLICT (minute) DO UPDATE SET first_id = min(first_id, excluded.first_id), last_id = max(last_id, excluded.last_id)`

// migrations are the schema history of decisions.db. Versions 2 and 3
// keep the numbers they had when every database shared one list, so that
// files written before the split are recognised as up to date.
var migrations = []sqlite.Migration{
	{Version: 2, Name: "decision log", SQL: decisionSchema},
	{Version: 3, Name: "decision log agent", SQL: decisionAgentSchema},
	{Version: 4, Name: "decision log shadow", SQL: decisionShadowSchema},
	{Version: 5, Name: "decision log partial session index", SQL: decisionSessionSchema},
	{Version: 6, Name: "decision log minutes instead of the time index", SQL: decisionMinutesSchema},
}

// File is the decision log's SQLite file in the config dir.
const File = "decisions.db"

// Open opens (creating if needed) the decision log's SQLite file at path,
// applies its migrations and starts the writer. Close stops the writer and
// closes the file.
func Open(path string, opts Options) (*Log, error) {
	db, err := sqlite.Open(path, migrations)
	if err != nil {
		return nil, fmt.Errorf("decision log: %w", err)
	}
	if _, err := db.SQL().Exec(markUnmarked); err != nil {
		db.Close()
		return nil, fmt.Errorf("decision log: mark the minutes of unmarked entries: %w", err)
	}
	l := newLog(db, opts)
	l.owned = db
	return l, nil
}

// newLog starts the writer of the decision log in db (whose migrations
// made the table). Close stops it.
func newLog(db *sqlite.DB, opts Options) *Log {
	defaults.Positive(&opts.BatchSize, sqliteBatchSize)
	if opts.Linger == 0 {
		opts.Linger = sqliteLinger
	}
	opts.Fill()
	l := &Log{db: db.SQL(), opts: opts}
	l.Writer = NewWriter(opts, WriterSteps{Write: l.insert, Prune: l.Prune, Stopped: l.closeInsert})
	return l
}

// sqliteBatchSize and sqliteLinger are the SQLite log's defaults: a
// transaction's begin and commit (the WAL's locks and a write per page)
// cost the same for 100 entries as for 1,000, so under load the writer
// waits for batches of 1,024 (at 15,000 decisions a second, 70 ms): 4.1-4.8
// µs of CPU an entry instead of 4.8-5.2 in batches of 256 and 5.7-6.1 in
// batches of 128 (BENCHMARKS.md "Ninth round"). A decision is readable
// from the log at most 100 ms after it was made (Flush waits for it).
const (
	sqliteBatchSize = 1024
	sqliteLinger    = 100 * time.Millisecond
)

// Close writes what is queued, stops the writer and closes the database.
func (l *Log) Close() error {
	_ = l.Writer.Close()
	if l.owned != nil {
		return l.owned.Close()
	}
	return nil
}

// closeInsert releases the prepared INSERTs when the writer stops.
func (l *Log) closeInsert() {
	if l.markMinutes != nil {
		_ = l.markMinutes.Close()
	}
	for _, family := range l.inserts {
		for _, stmt := range family {
			if stmt != nil {
				_ = stmt.Close()
			}
		}
	}
}

// insertRows is the most entries one INSERT statement writes: one statement
// of many rows costs far less per row than a statement per row (database/sql
// and the driver's per-call work), and 128 rows of 13 values stay well
// under SQLite's limit on bound parameters.
const insertRows = 128

// insertSizes is how many INSERT statements are kept prepared: of 128, 64,
// ..., 1 rows. A batch is written 128 rows at a time and its rest in
// halving chunks (at most seven statements), so no batch prepares a
// statement for its own size.
const insertSizes = 8

// insertColumns are the columns one entry writes, in the order of rowValues.
const insertColumns = 13

// insert writes a batch of entries in one transaction, in the order given
// (ids follow it), insertRows or fewer to a statement.
func (l *Log) insert(ctx context.Context, batch []Entry) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	args := make([]any, 0, insertRows*insertColumns)
	l.marks = l.marks[:0]
	for len(batch) > 0 {
		size, n := insertChunk(len(batch))
		rows := l.rows[:0]
		for i := range batch[:n] {
			row, err := l.rowValues(&batch[i])
			if err != nil {
				return err
			}
			rows = append(rows, row)
		}
		l.rows = rows
		lean := allLean(rows)
		args = args[:0]
		for i := range rows {
			args = appendRow(args, &rows[i], lean)
		}
		stmt, err := l.insertStmt(tx, lean, size)
		if err != nil {
			return err
		}
		res, err := stmt.Exec(args...)
		if err != nil {
			return err
		}
		last, err := res.LastInsertId()
		if err != nil {
			return err
		}
		// One statement's rows take consecutive ids, in order (the
		// writer holds the write lock; ids are never reused).
		for i := range rows {
			l.mark(rows[i][0].(int64), last-int64(len(rows)-1-i))
		}
		batch = batch[n:]
	}
	if err := l.storeMarks(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// minuteMark is a minute of a batch and the smallest and largest id logged
// with a time in it.
type minuteMark struct{ minute, first, last int64 }

// minuteMicros is the length of a minute of decisions_minutes in ts units.
const minuteMicros = 60_000_000

// mark adds the entry id, logged at ts, to its minute's mark.
func (l *Log) mark(ts, id int64) {
	minute := ts / minuteMicros
	for i := range l.marks {
		if m := &l.marks[i]; m.minute == minute {
			m.first, m.last = min(m.first, id), max(m.last, id)
			return
		}
	}
	l.marks = append(l.marks, minuteMark{minute: minute, first: id, last: id})
}

// storeMarks widens the batch's minutes in decisions_minutes to their ids.
func (l *Log) storeMarks(tx *sql.Tx) error {
	if l.markMinutes == nil {
		stmt, err := l.db.Prepare(`INSERT INTO decisions_minutes (minute, first_id, last_id) VALUES (?, ?, ?)
			ON CONFLICT (minute) DO UPDATE SET first_id = min(first_id, excluded.first_id), last_id = max(last_id, excluded.last_id)`)
		if err != nil {
			return err
		}
		l.markMinutes = stmt
	}
	stmt := tx.Stmt(l.markMinutes)
	for _, m := range l.marks {
		if _, err := stmt.Exec(m.minute, m.first, m.last); err != nil {
			return fmt.Errorf("mark minute: %w", err)
		}
	}
	return nil
}

// insertChunk is the statement (its index in inserts) and the number of
// entries, insertRows>>size, that write the next of left entries: the
// largest that fits.
func insertChunk(left int) (size, n int) {
	for n = insertRows; n > left; n >>= 1 {
		size++
	}
	return size, n
}

// insertStmt is the INSERT of insertRows>>size entries, lean or full, in
// tx, prepared once on the database.
func (l *Log) insertStmt(tx *sql.Tx, lean bool, size int) (*sql.Stmt, error) {
	family := 0
	if lean {
		family = 1
	}
	if l.inserts[family][size] == nil {
		stmt, err := l.db.Prepare(insertStatement(insertRows>>size, lean))
		if err != nil {
			return nil, err
		}
		l.inserts[family][size] = stmt
	}
	return tx.Stmt(l.inserts[family][size]), nil
}

// insertRow is one row of the INSERT. The optional text columns (channel,
// session, matched_rule, shadow_level, shadow_rule) take coalesce of the value and the empty string:
// rowValues binds NULL for an empty one, which the driver binds without
// copying a string into C memory, and the row stores the empty string as before.
const insertRow = "(?,?,?,?,?,coalesce(?,''),coalesce(?,''),?,coalesce(?,''),?,?,coalesce(?,''),coalesce(?,''))"

// leanRow is insertRow for an entry without channel, session, request and
// shadow outcome (nearly every REST evaluate): those are written as
// constants, so a row binds 8 values instead of 13. The driver's work per
// bound value, a NULL included, is a fifth of the writer's CPU
// (BENCHMARKS.md "Ninth round").
const leanRow = "(?,?,?,?,?,'','',?,coalesce(?,''),?,NULL,'','')"

// leanColumns are the indexes in rowValues of the values leanRow binds;
// the others must be nil (empty) for a row to be written lean.
var leanColumns = [...]int{0, 1, 2, 3, 4, 7, 8, 9}

// leanLeft are the values of rowValues leanRow writes as constants.
var leanLeft = [...]int{5, 6, 10, 11, 12}

// allLean reports whether every row can be written by leanRow.
func allLean(rows [][insertColumns]any) bool {
	for i := range rows {
		for _, c := range leanLeft {
			if rows[i][c] != nil {
				return false
			}
		}
	}
	return true
}

// appendRow appends the values one row binds: all of them, or the lean ones.
func appendRow(args []any, row *[insertColumns]any, lean bool) []any {
	if !lean {
		return append(args, row[:]...)
	}
	for _, c := range leanColumns {
		args = append(args, row[c])
	}
	return args
}

// insertStatement is the INSERT of n entries, lean or full.
func insertStatement(n int, lean bool) string {
	row := insertRow
	if lean {
		row = leanRow
	}
	var b strings.Builder
	b.WriteString(`INSERT INTO decisions
		(ts, source, agent, tool, summary, channel, session, level, matched_rule, latency_us, request, shadow_level, shadow_rule) VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	return b.String()
}

// rowValues are the column values of one entry, prepared; an empty
// optional text is nil (see insertRow).
func (l *Log) rowValues(e *Entry) ([insertColumns]any, error) {
	e.Prepare()
	var req any
	if e.Request != nil {
		b, err := json.Marshal(e.Request)
		if err != nil {
			return [insertColumns]any{}, fmt.Errorf("encode request: %w", err)
		}
		req = string(b)
	}
	if e.Time.IsZero() {
		e.Time = l.opts.Now()
	}
	if e.Agent == "" {
		e.Agent = "rest"
	}
	return [insertColumns]any{e.Time.UnixMicro(), e.Source, e.Agent, e.Tool, e.Summary, orNull(e.Channel), orNull(e.Session),
		e.Level, orNull(e.MatchedRule), e.LatencyMicros, req, orNull(e.ShadowLevel), orNull(e.ShadowRule)}, nil
}

// orNull is s, or nil when it is empty (see insertRow).
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Prune deletes entries older than the retention and, beyond MaxRows, the
// oldest ones, and the minutes left without entries, in one transaction.
// It returns the number of entries deleted.
func (l *Log) Prune(ctx context.Context) (int64, error) {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	cutoff := l.opts.Now().Add(-l.opts.Retention).UnixMicro()
	// The rows older than cutoff are among the ids of the minutes up to
	// cutoff's (see decisionMinutesSchema).
	res, err := tx.ExecContext(ctx, `DELETE FROM decisions WHERE ts < ?1 AND id <= (
		SELECT max(last_id) FROM decisions_minutes WHERE minute <= ?2)`, cutoff, (cutoff-1)/minuteMicros)
	if err != nil {
		return 0, fmt.Errorf("prune by age: %w", err)
	}
	byAge, _ := res.RowsAffected()
	res, err = tx.ExecContext(ctx, `DELETE FROM decisions WHERE id <= (
		SELECT id FROM decisions ORDER BY id DESC LIMIT 1 OFFSET ?)`, l.opts.MaxRows)
	if err != nil {
		return 0, fmt.Errorf("prune by count: %w", err)
	}
	byCount, _ := res.RowsAffected()
	if err := pruneMinutes(ctx, tx, cutoff); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	return byAge + byCount, nil
}

// pruneMinutes deletes the minutes whose decisions are all gone: those
// wholly before cutoff, and those whose ids are all below the oldest kept
// (an id, once deleted, is never used again). A minute left over would
// only widen a time range's ids.
func pruneMinutes(ctx context.Context, tx *sql.Tx, cutoff int64) error {
	if cutoff > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM decisions_minutes WHERE minute < ?`, cutoff/minuteMicros); err != nil {
			return fmt.Errorf("prune minutes by age: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM decisions_minutes WHERE last_id < coalesce(
		(SELECT min(id) FROM decisions), 9223372036854775807)`); err != nil {
		return fmt.Errorf("prune minutes by count: %w", err)
	}
	return nil
}

// Query filters and pages the log. Empty fields do not filter.
type Query struct {
	Tool string
	// Server keeps the calls of one MCP server's tools (mcp__SERVER__...);
	// ToolPrefix the calls of tools whose name begins with it.
	Server     string
	ToolPrefix string
	Level      string
	Rule       string // a substring of matched_rule
	Session    string
	Agent      string
	Since      time.Time
	Until      time.Time
	// Shadowed keeps the calls a shadow rule would have decided
	// otherwise; ShadowRule those whose shadow outcome names this rule id.
	Shadowed   bool
	ShadowRule string
	// Limit is the page size (1-500, default 50). Before is a cursor: only
	// entries with a smaller id; Offset skips entries (used without Before).
	Limit  int
	Before int64
	Offset int
}

// MaxPage is the largest page Query returns.
const MaxPage = 500

// Page is one page of the log, newest first. NextBefore is the
// cursor of the next page, 0 when this is the last.
type Page struct {
	Entries    []Entry
	NextBefore int64
}

// OpContains is the Op of a Cond whose Arg is a substring of the column;
// OpPrefix of one whose Arg begins the column. Both compare bytes, with no
// wildcard characters.
const (
	OpContains = "contains"
	OpPrefix   = "prefix"
)

// Cond is one condition of a query: Column Op Arg, with Op one of "=",
// "<>", ">=", "<", OpContains and OpPrefix. Each log writes it in its own SQL.
type Cond struct {
	Column string
	Op     string
	Arg    any
}

// Conds are the conditions of q's filters (joined by AND), the same for
// every log: text columns compare to strings, ts to unix microseconds.
func (q Query) Conds() []Cond {
	var conds []Cond
	add := func(col, op string, arg any) { conds = append(conds, Cond{Column: col, Op: op, Arg: arg}) }
	for _, f := range []struct{ col, op, v string }{
		{"tool", "=", q.Tool}, {"level", "=", q.Level}, {"matched_rule", OpContains, q.Rule},
		{"session", "=", q.Session}, {"agent", "=", q.Agent},
	} {
		if f.v != "" {
			add(f.col, f.op, f.v)
		}
	}
	if q.Server != "" {
		add("tool", OpPrefix, "mcp__"+q.Server+"__")
	}
	if q.ToolPrefix != "" {
		add("tool", OpPrefix, q.ToolPrefix)
	}
	if q.Shadowed {
		add("shadow_level", "<>", "")
	}
	if q.ShadowRule != "" {
		add("shadow_rule", OpContains, "rules["+q.ShadowRule+"]")
	}
	if !q.Since.IsZero() {
		add("ts", ">=", q.Since.UnixMicro())
	}
	if !q.Until.IsZero() {
		add("ts", "<", q.Until.UnixMicro())
	}
	if q.Before > 0 {
		add("id", "<", q.Before)
	}
	return conds
}

// dialect is how one log's SQL writes the conditions of a query.
type dialect struct {
	// param is the placeholder of the i-th argument (from 0).
	param func(i int) string
	// strpos is the function that finds a substring (1-based, 0: absent).
	strpos string
	// text is what a string argument becomes (nil: itself).
	text func(string) string
}

// sqliteSQL writes SQLite's conditions.
var sqliteSQL = dialect{param: func(int) string { return "?" }, strpos: "instr"}

// condSQL writes the conditions of q (Conds) in d's SQL, their arguments
// numbered from first.
func (q Query) condSQL(d dialect, first int) ([]string, []any) {
	conds := q.Conds()
	sqls := make([]string, len(conds))
	args := make([]any, len(conds))
	for i, c := range conds {
		p := d.param(first + i)
		sqls[i] = c.Column + " " + c.Op + " " + p
		switch c.Op {
		case OpContains:
			sqls[i] = d.strpos + "(" + c.Column + ", " + p + ") > 0"
		case OpPrefix:
			sqls[i] = d.strpos + "(" + c.Column + ", " + p + ") = 1"
		}
		args[i] = c.Arg
		if s, ok := c.Arg.(string); ok && d.text != nil {
			args[i] = d.text(s)
		}
	}
	return sqls, args
}

// where builds the WHERE clause of a query in the SQLite file.
func (q Query) where() (string, []any) {
	sqls, args := q.condSQL(sqliteSQL, 0)
	if len(sqls) == 0 {
		return "", nil
	}
	if q.Session != "" {
		// the partial index decisions_session holds only these rows
		sqls = append(sqls, "session <> ''")
	}
	if !q.Since.IsZero() || !q.Until.IsZero() {
		// the time range's ids, from its minutes (decisionMinutesSchema)
		first, last := int64(math.MinInt64), int64(math.MaxInt64)
		if !q.Since.IsZero() {
			first = q.Since.UnixMicro() / minuteMicros
		}
		if !q.Until.IsZero() {
			last = (q.Until.UnixMicro() - 1) / minuteMicros
		}
		sqls = append(sqls,
			"id >= (SELECT min(first_id) FROM decisions_minutes WHERE minute BETWEEN ? AND ?)",
			"id <= (SELECT max(last_id) FROM decisions_minutes WHERE minute BETWEEN ? AND ?)")
		args = append(args, first, last, first, last)
	}
	return " WHERE " + strings.Join(sqls, " AND "), args
}

const decisionColumns = `id, ts, source, agent, tool, summary, channel, session, level, matched_rule, latency_us, request, shadow_level, shadow_rule`

// Query returns one page of entries matching q, newest first. The full
// request is not included.
func (l *Log) Query(ctx context.Context, q Query) (Page, error) {
	q.Limit = q.pageLimit()
	where, args := q.where()
	args = append(args, q.Limit+1, max(q.Offset, 0))
	rows, err := l.db.QueryContext(ctx, `SELECT `+decisionColumns+` FROM decisions`+where+
		` ORDER BY id DESC LIMIT ? OFFSET ?`, args...)
	if err != nil {
		return Page{}, fmt.Errorf("query decisions: %w", err)
	}
	entries, err := scanDecisions(rows, false)
	if err != nil {
		return Page{}, err
	}
	return newPage(entries, q.Limit), nil
}

// pageLimit is the page size of q: 50 when unset, at most MaxPage.
func (q Query) pageLimit() int {
	if q.Limit <= 0 {
		return 50
	}
	return min(q.Limit, MaxPage)
}

// newPage is the page of entries read with one more than limit: the extra
// one says there is a next page, which starts before the last one kept.
func newPage(entries []Entry, limit int) Page {
	page := Page{Entries: entries}
	if len(entries) > limit {
		page.Entries = entries[:limit]
		page.NextBefore = page.Entries[limit-1].ID
	}
	return page
}

// Recent returns up to n of the newest entries that carry their full
// request (logged with --log-full-args), newest first.
func (l *Log) Recent(ctx context.Context, n int) ([]Entry, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT `+decisionColumns+` FROM decisions
		WHERE request IS NOT NULL ORDER BY id DESC LIMIT ?`, n)
	if err != nil {
		return nil, fmt.Errorf("recent decisions: %w", err)
	}
	return scanDecisions(rows, true)
}

func scanDecisions(rows *sql.Rows, withRequest bool) ([]Entry, error) {
	defer rows.Close()
	out := []Entry{}
	var e Entry
	var ts int64
	var req *string
	for rows.Next() {
		if err := rows.Scan(entryDests(&e, &ts, &req)...); err != nil {
			return nil, fmt.Errorf("scan decision: %w", err)
		}
		got, err := readEntry(e, ts, req, withRequest)
		if err != nil {
			return nil, err
		}
		out = append(out, got)
	}
	return out, rows.Err()
}

// entryDests are the scan destinations of one row of decisionColumns:
// the entry's fields, ts (unix microseconds) and the request text (NULL
// when the call was logged without its arguments).
func entryDests(e *Entry, ts *int64, req **string) []any {
	return []any{&e.ID, ts, &e.Source, &e.Agent, &e.Tool, &e.Summary, &e.Channel, &e.Session,
		&e.Level, &e.MatchedRule, &e.LatencyMicros, req, &e.ShadowLevel, &e.ShadowRule}
}

// readEntry is e as read with its time and, when withRequest, its request.
func readEntry(e Entry, ts int64, req *string, withRequest bool) (Entry, error) {
	e.Time = time.UnixMicro(ts).UTC()
	e.Request = nil
	if withRequest && req != nil {
		var r Request
		if err := json.Unmarshal([]byte(*req), &r); err != nil {
			return e, fmt.Errorf("decision %d: decode request: %w", e.ID, err)
		}
		e.Request = &r
	}
	return e, nil
}

// LevelBucket counts the decisions of one time bucket by level.
type LevelBucket struct {
	Start  time.Time
	Counts map[string]int64
}

// LevelSeries counts the entries matching q (its paging ignored) by level
// in n equal buckets from q.Since to q.Until (defaults: the last 24 hours).
func (l *Log) LevelSeries(ctx context.Context, q Query, n int) ([]LevelBucket, error) {
	q, width, buckets := q.Series(n, l.opts.Now)
	where, args := q.where()
	rows, err := l.db.QueryContext(ctx, `SELECT (ts - ?) / ?, level, count(*) FROM decisions`+where+
		` GROUP BY 1, 2`, append([]any{q.Since.UnixMicro(), width}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("decision series: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var i, c int64
		var level string
		if err := rows.Scan(&i, &level, &c); err != nil {
			return nil, fmt.Errorf("scan series: %w", err)
		}
		if i >= 0 && i < int64(len(buckets)) {
			buckets[i].Counts[level] += c
		}
	}
	return buckets, rows.Err()
}

// Series prepares a LevelSeries of n buckets (at least one) over q: q
// with its defaults (Until now(), Since 24 hours before it) and its paging
// cleared, the width of a bucket in microseconds, and the buckets, empty.
func (q Query) Series(n int, now func() time.Time) (Query, int64, []LevelBucket) {
	if q.Until.IsZero() {
		q.Until = now()
	}
	if q.Since.IsZero() || !q.Since.Before(q.Until) {
		q.Since = q.Until.Add(-24 * time.Hour)
	}
	n = max(n, 1)
	q.Before, q.Limit, q.Offset = 0, 0, 0
	width := max((q.Until.Sub(q.Since).Microseconds()+int64(n)-1)/int64(n), 1)
	buckets := make([]LevelBucket, n)
	for i := range buckets {
		buckets[i] = LevelBucket{Start: q.Since.Add(time.Duration(int64(i)*width) * time.Microsecond), Counts: map[string]int64{}}
	}
	return q, width, buckets
}
