package grant

import (
	"context"
	"errors"
	"time"

	"github.com/toolgate/toolgate/engine"
)

// Scope is how long and where a grant holds.
type Scope string

// The scopes a grant can have.
const (
	// ScopeSession: calls of the remembered pattern in the approved call's
	// session, for at most SessionLifetime.
	ScopeSession Scope = "session"
	// ScopeTimed: calls of the remembered pattern in any session, until
	// the grant expires (allow_for with ttl_seconds).
	ScopeTimed Scope = "timed"
)

// Valid reports whether s is a scope a grant may have.
func (s Scope) Valid() bool { return s == ScopeSession || s == ScopeTimed }

// Limits of a grant's lifetime.
const (
	// SessionLifetime bounds a session grant: a session has no end toolgate
	// can see, so a grant for it does not outlive a working day.
	SessionLifetime = 24 * time.Hour
	// MinTTL and MaxTTL bound allow_for's ttl_seconds.
	MinTTL = time.Second
	MaxTTL = 30 * 24 * time.Hour
)

// Sentinel errors; check them with errors.Is.
var (
	// ErrNotFound: no live grant has this id.
	ErrNotFound = errors.New("grant: not found")
	// ErrInvalid: a grant is missing what binds it (tool, channel, pattern
	// or digest, a session for a session grant, an expiry).
	ErrInvalid = errors.New("grant: invalid")
)

// InvalidError is ErrInvalid with what the grant lacks, in words fit for a
// person.
type InvalidError struct {
	Message string
	// Cause is the error behind it, if any (errors.Is sees it too).
	Cause error
}

// Error is ErrInvalid's text and the message.
func (e *InvalidError) Error() string { return ErrInvalid.Error() + ": " + e.Message }

// Unwrap returns ErrInvalid and the cause.
func (e *InvalidError) Unwrap() []error {
	if e.Cause == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.Cause}
}

// Grant is one remembered answer: the tool it covers, the pattern that an
// "always allow" would remember (or, for a call with none, the arguments'
// digest), the session where scoped, who granted it and until when.
type Grant struct {
	ID         string `json:"id"`
	ToolName   string `json:"tool_name"`
	Scope      Scope  `json:"scope"`
	MatchType  string `json:"match_type,omitempty"`
	Pattern    string `json:"pattern,omitempty"`
	ArgsDigest string `json:"args_digest,omitempty"`
	SessionID  string `json:"session_id,omitempty"`
	// TokenID is the token of the approved call: a session grant holds for
	// that token's calls in the session only.
	TokenID string `json:"token_id,omitempty"`
	// ChannelID is the approved call's channel in engine.ChannelKey form.
	ChannelID string `json:"channel_id"`
	// Workspace is the approved call's workspace as the engine judged it
	// (engine.Engine.GrantWorkspace).
	Workspace string `json:"workspace,omitempty"`
	// Agent is the runtime that asked (rest, claude-code, codex, gemini,
	// mcp, ...), for the Grants page's filter.
	Agent string `json:"agent,omitempty"`
	// Summary is what the person saw, secrets masked, for the Grants page.
	Summary    string    `json:"summary,omitempty"`
	ApprovalID string    `json:"approval_id,omitempty"`
	GrantedBy  string    `json:"granted_by"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// LiveAt reports whether g still holds at now.
func (g Grant) LiveAt(now time.Time) bool { return now.Before(g.ExpiresAt) }

// Check reports what a grant lacks to bind it, as ErrInvalid.
func (g Grant) Check() error {
	switch {
	case g.ID == "" || g.ToolName == "":
		return &InvalidError{Message: "a grant needs an id and a tool"}
	case !g.Scope.Valid():
		return &InvalidError{Message: "scope must be session or timed"}
	case g.Pattern == "" && g.ArgsDigest == "":
		return &InvalidError{Message: "a grant needs a pattern or an arguments digest"}
	case g.Pattern != "" && g.MatchType == "":
		return &InvalidError{Message: "a pattern grant needs its match type"}
	case g.Scope == ScopeSession && g.SessionID == "":
		return &InvalidError{Message: "a session grant needs a session"}
	case g.ExpiresAt.IsZero() || !g.ExpiresAt.After(g.CreatedAt):
		return &InvalidError{Message: "a grant needs an expiry after its creation"}
	}
	return nil
}

// engineGrant is g as the engine consults it.
func (g Grant) engineGrant() engine.Grant {
	session, token := "", ""
	if g.Scope == ScopeSession {
		session, token = g.SessionID, g.TokenID
	}
	return engine.Grant{
		ID: g.ID, Tool: g.ToolName, Channel: g.ChannelID, Workspace: g.Workspace,
		Session: session, Token: token, MatchType: g.MatchType, Pattern: g.Pattern,
		Digest: g.ArgsDigest, ExpiresAt: g.ExpiresAt,
	}
}

// Store keeps the grants where every replica sees them. store/grants implements
// it on SQLite and on PostgreSQL; integration and conformance tests hold both to
// the same behaviour.
type Store interface {
	// AddGrant stores g (checked by the caller with Check).
	AddGrant(ctx context.Context, g Grant) error
	// RevokeGrant removes the grant with id and returns it; ErrNotFound
	// when no stored grant has that id.
	RevokeGrant(ctx context.Context, id string) (Grant, error)
	// LiveGrants lists the grants that expire after now, oldest first
	// (created_at, then id). A store may drop expired grants at any time.
	LiveGrants(ctx context.Context, now time.Time) ([]Grant, error)
	// WatchGrants calls changed after any replica adds or revokes a grant,
	// until ctx ends; it returns ctx's error then. A store with one server
	// (SQLite) may call changed for its own writes only, or never: the
	// Book reloads after its own writes.
	WatchGrants(ctx context.Context, changed func()) error
}
