package pg

import (
	"context"
	"fmt"
)

// Parts of the schema. Each resource's PostgreSQL store migrates its own
// parts when it is opened (MigrateParts); the part names and their steps
// are the rows of schema_migrations in every deployed database, so they
// never change.
const (
	PartPolicy    = "policy"
	PartAuth      = "auth"
	PartSessions  = "sessions"
	PartApprovals = "approvals"
	PartHistory   = "history"
	PartGrants    = "grants"
	PartDecisions = "decisionlog"
)

// schema is every part of toolgate's PostgreSQL schema with its steps, in
// one list: the one place a new step is added. Steps of a part are applied
// in order; an applied step is never edited (Migrate checks its name).
var schema = []struct {
	part  string
	steps []Migration
}{
	{PartPolicy, policyMigrations},
	{PartAuth, authMigrations},
	{PartSessions, sessionMigrations},
	{PartApprovals, approvalMigrations},
	{PartHistory, historyMigrations},
	{PartGrants, grantMigrations},
	{PartDecisions, decisionMigrations},
}

// Steps returns the steps of part in schema (nil for an unknown part).
func Steps(part string) []Migration {
	for _, p := range schema {
		if p.part == part {
			return p.steps
		}
	}
	return nil
}

// MigrateParts brings each of parts up to its last step in schema, in the
// order given (see Migrate).
func MigrateParts(ctx context.Context, db *DB, parts ...string) error {
	for _, part := range parts {
		steps := Steps(part)
		if steps == nil {
			return fmt.Errorf("%w: unknown part %q", ErrBadMigrations, part)
		}
		if err := Migrate(ctx, db, part, steps); err != nil {
			return err
		}
	}
	return nil
}

// policyMigrations are the steps of PartPolicy: one row holding the
// `permissions` section as YAML text and the user's built-in rules text,
// with a version that every write raises by one.
var policyMigrations = []Migration{
	{Version: 1, Name: "policy_document", SQL: `
CREATE TABLE policy_document (
	id         smallint    PRIMARY KEY CHECK (id = 1),
	config     text,
	builtin    text,
	version    bigint      NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO policy_document (id, config, builtin, version) VALUES (1, NULL, NULL, 0);`},
}

// authMigrations are the steps of PartAuth: bearer tokens by the hex
// SHA-256 of their secret; the admin token is the row with id "admin".
var authMigrations = []Migration{
	{Version: 1, Name: "auth_tokens", SQL: `
CREATE TABLE auth_tokens (
	id       text        PRIMARY KEY,
	name     text        NOT NULL,
	role     text        NOT NULL CHECK (role IN ('admin', 'approver', 'agent')),
	channels text[]      NOT NULL DEFAULT '{}',
	sessions text[]      NOT NULL DEFAULT '{}',
	hash     text        NOT NULL UNIQUE,
	created  timestamptz NOT NULL DEFAULT now()
);`},
}

// sessionMigrations are the steps of PartSessions: browser sessions keyed
// by the SHA-256 of their id, so that a copy of the table holds no live
// cookie.
var sessionMigrations = []Migration{
	{Version: 1, Name: "auth_sessions", SQL: `
CREATE TABLE auth_sessions (
	id_hash    bytea       PRIMARY KEY,
	principal  jsonb       NOT NULL,
	csrf       text        NOT NULL,
	expires    timestamptz NOT NULL,
	flash_kind text        NOT NULL DEFAULT '',
	flash_text text        NOT NULL DEFAULT ''
);
CREATE INDEX auth_sessions_expires ON auth_sessions (expires);`},
}

// approvalMigrations create the table of live asks. It holds the raw tool
// arguments (the join key and an always-allow override need them), so
// resolved rows are removed after the retention; the approval history, with
// redacted arguments, is kept elsewhere.
var approvalMigrations = []Migration{{
	Version: 1,
	Name:    "approval_asks",
	SQL: `CREATE TABLE approval_asks (
	id             text        PRIMARY KEY,
	status         text        NOT NULL CHECK (status IN ('pending', 'allowed', 'denied', 'expired', 'cancelled')),
	join_key       bytea,
	created_at     timestamptz NOT NULL,
	expires_at     timestamptz NOT NULL,
	request        json        NOT NULL,
	joins          integer     NOT NULL DEFAULT 0,
	choice         text        NOT NULL DEFAULT '',
	decided_by     text        NOT NULL DEFAULT '',
	comment        text        NOT NULL DEFAULT '',
	decided_at     timestamptz,
	persisted_rule json
);
CREATE UNIQUE INDEX approval_asks_pending_key ON approval_asks (join_key) WHERE status = 'pending';
CREATE INDEX approval_asks_pending_due ON approval_asks (expires_at) WHERE status = 'pending';
CREATE INDEX approval_asks_decided ON approval_asks (decided_at) WHERE status <> 'pending';`,
}}

// historyMigrations are the approval history's schema steps: one row per
// approval (its latest state, with redacted arguments) and one per state
// change. It is apart from approval_asks, the live asks with their raw
// arguments, which are removed soon after they end; the history is kept.
// Times are unix nanoseconds, as in the SQLite history, so that cursors and
// the times read back are the same; ids compare bytewise (COLLATE "C") as
// SQLite compares them, whatever the database's collation, so that pages
// break ties in the same order.
var historyMigrations = []Migration{{Version: 1, Name: "approval history", SQL: `
CREATE TABLE approval_history (
	id             text    COLLATE "C" PRIMARY KEY,
	status         text    NOT NULL,
	created_at     bigint  NOT NULL,
	expires_at     bigint  NOT NULL,
	decided_at     bigint,
	tool_name      text    NOT NULL,
	tool_args      text    NOT NULL,
	channel_id     text    NOT NULL,
	session_id     text    NOT NULL,
	workspace      text    NOT NULL,
	matched_rule   text    NOT NULL,
	reason         text    NOT NULL,
	external_paths text    NOT NULL,
	choice         text    NOT NULL,
	decided_by     text    NOT NULL,
	comment        text    NOT NULL,
	decision       text    NOT NULL,
	persisted_rule text    NOT NULL,
	joins          integer NOT NULL
);
COMMENT ON TABLE approval_history IS 'latest state of every approval; times in unix nanoseconds, tool_args redacted JSON';
CREATE INDEX approval_history_by_created ON approval_history (created_at DESC, id DESC);
CREATE INDEX approval_history_by_status ON approval_history (status, created_at DESC, id DESC);
CREATE TABLE approval_history_events (
	seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	approval_id text   COLLATE "C" NOT NULL REFERENCES approval_history (id) ON DELETE CASCADE,
	at          bigint NOT NULL,
	status      text   NOT NULL,
	choice      text   NOT NULL,
	actor       text   NOT NULL,
	comment     text   NOT NULL
);
CREATE INDEX approval_history_events_by_approval ON approval_history_events (approval_id, seq);
`}, {Version: 2, Name: "approval cause", SQL: approvalCauseStep},
	{Version: 3, Name: "approval agent and grant", SQL: approvalGrantStep}}

// approvalCauseStep keeps the step that asked (approval.Asked.Cause), as
// the SQLite history does, so that an answer read back says why it was
// asked rather than a guess from its paths. Rows recorded before it read
// back with an empty cause, which the pages treat as unknown.
const approvalCauseStep = `ALTER TABLE approval_history ADD COLUMN cause text NOT NULL DEFAULT '';`

// approvalGrantStep keeps the runtime that asked and the grant an answer
// made (its pattern masked), as the SQLite history does.
const approvalGrantStep = `ALTER TABLE approval_history ADD COLUMN agent text NOT NULL DEFAULT '';
ALTER TABLE approval_history ADD COLUMN grant_json text NOT NULL DEFAULT '';`

// grantMigrations are the steps of PartGrants: one row per live grant.
var grantMigrations = []Migration{{
	Version: 1,
	Name:    "grants",
	SQL: `CREATE TABLE grants (
	id          text        PRIMARY KEY,
	tool_name   text        NOT NULL,
	scope       text        NOT NULL CHECK (scope IN ('session', 'timed')),
	match_type  text        NOT NULL,
	pattern     text        NOT NULL,
	args_digest text        NOT NULL,
	session_id  text        NOT NULL,
	token_id    text        NOT NULL,
	channel_id  text        NOT NULL,
	workspace   text        NOT NULL,
	agent       text        NOT NULL,
	summary     text        NOT NULL,
	approval_id text        NOT NULL,
	granted_by  text        NOT NULL,
	created_at  timestamptz NOT NULL,
	expires_at  timestamptz NOT NULL
);
CREATE INDEX grants_by_expiry ON grants (expires_at);`,
}}

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
`}, {Version: 2, Name: "decision log shadow", SQL: `
ALTER TABLE decisions ADD COLUMN shadow_level text NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN shadow_rule text NOT NULL DEFAULT '';
`}}
