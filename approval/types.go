package approval

import (
	"errors"
	"slices"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/policy"
)

// Choice is a person's answer to an ask.
type Choice string

// The answers a person can give (docs/grants.md).
const (
	ChoiceAllowOnce Choice = "allow_once"
	// ChoiceAllowSession also grants the remembered pattern for the rest
	// of the ask's session.
	ChoiceAllowSession Choice = "allow_session"
	// ChoiceAllowFor also grants the remembered pattern, in any session,
	// for a number of seconds (ttl_seconds).
	ChoiceAllowFor    Choice = "allow_for"
	ChoiceAllowAlways Choice = "allow_always"
	ChoiceDeny        Choice = "deny"
)

// Choices lists every choice, in the order the card offers them.
var Choices = []Choice{ChoiceAllowOnce, ChoiceAllowSession, ChoiceAllowFor, ChoiceAllowAlways, ChoiceDeny}

// Valid reports whether c is one of the choices.
func (c Choice) Valid() bool { return slices.Contains(Choices, c) }

// Scoped reports whether c makes a grant (allow_session, allow_for).
func (c Choice) Scoped() bool { return c == ChoiceAllowSession || c == ChoiceAllowFor }

// Decision returns the final decision a choice gives: allow or deny.
func (c Choice) Decision() string {
	if c.Valid() && c != ChoiceDeny {
		return DecisionAllow
	}
	return DecisionDeny
}

// Status is the state of an Approval.
type Status string

// The states of an Approval. Only StatusPending can change.
const (
	StatusPending   Status = "pending"
	StatusAllowed   Status = "allowed"
	StatusDenied    Status = "denied"
	StatusExpired   Status = "expired"
	StatusCancelled Status = "cancelled"
)

// Valid reports whether s is one of the five statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusAllowed, StatusDenied, StatusExpired, StatusCancelled:
		return true
	}
	return false
}

// Final decisions of a resolved Approval.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
)

// Event types sent to subscribers.
const (
	EventRequested = "approval.requested"
	EventResolved  = "approval.resolved"
)

// Principals the manager names as decided_by when no person answered.
const (
	PrincipalSystem = "system"
)

// Sentinel errors; check them with errors.Is.
var (
	// ErrNotFound: no approval has this id (or it has left memory).
	ErrNotFound = errors.New("approval: not found")
	// ErrAlreadyDecided: the approval is no longer pending; the first answer won.
	ErrAlreadyDecided = errors.New("approval: already decided")
	// ErrInvalidChoice: the choice is not one of Choices.
	ErrInvalidChoice = errors.New("approval: invalid choice")
	// ErrInvalidTTL: allow_for without a ttl in [grant.MinTTL, grant.MaxTTL],
	// or a ttl given with another choice.
	ErrInvalidTTL = errors.New("approval: invalid ttl_seconds")
	// ErrNoSession: allow_session for an ask that names no session.
	ErrNoSession = errors.New("approval: the ask has no session to allow")
	// ErrNoGranter: a scoped choice on a server that keeps no grants.
	ErrNoGranter = errors.New("approval: grants are not available")
	// ErrInvalidRequest: Create got something that is not an ask it may prompt for.
	ErrInvalidRequest = errors.New("approval: invalid request")
	// ErrNoPersister: allow_always was chosen but no Persister is configured.
	ErrNoPersister = errors.New("approval: always-allow is not available")
	// ErrClosed: the manager has been shut down.
	ErrClosed = errors.New("approval: manager shut down")
)

// FieldError is a refusal that names the field at fault and says, in
// words fit for a person, what is wrong; Err is its sentinel (errors.Is).
type FieldError struct {
	Err     error
	Field   string
	Message string
}

// Error is the sentinel's text and the message.
func (e *FieldError) Error() string { return e.Err.Error() + ": " + e.Message }

// Unwrap returns the sentinel.
func (e *FieldError) Unwrap() error { return e.Err }

// invalid is a FieldError of kind ErrInvalidRequest.
func invalid(field, message string) *FieldError {
	return &FieldError{Err: ErrInvalidRequest, Field: field, Message: message}
}

// InvalidRequest is a FieldError of kind ErrInvalidRequest, for a shared
// store that refuses what an ask holds.
func InvalidRequest(field, message string) error { return invalid(field, message) }

// MaxCommentLen is the longest comment Decide accepts, in bytes.
const MaxCommentLen = 2000

// Request is the tool call an approval asks about.
type Request struct {
	ToolName  string         `json:"tool_name"`
	ToolArgs  map[string]any `json:"tool_args"`
	ChannelID string         `json:"channel_id"`
	SessionID string         `json:"session_id"`
	Workspace string         `json:"workspace,omitempty"`
	// Agent is the runtime that asked (rest, claude-code, codex, gemini,
	// ...), which a grant made from the answer records.
	Agent string `json:"agent,omitempty"`
	// TokenID is the id of the token that asked, to which a session grant
	// made from the answer is bound.
	TokenID string `json:"token_id,omitempty"`
}

// Call is the call the ask holds, read from ToolName and ToolArgs
// (engine.NewCall), for "always allow", grants, the webhook and the cards.
// It is read from the arguments the Request holds now rather than kept
// beside them: the manager canonicalizes and later clips them, the API and
// the live view show redacted copies, and the stores write and read
// ToolArgs alone, so a kept Call could speak of other arguments (an
// unredacted command on a redacted card).
func (r Request) Call() engine.Call { return engine.NewCall(r.ToolName, r.ToolArgs) }

// Asked is the engine decision that asked: why a person is being prompted.
type Asked struct {
	MatchedRule   string   `json:"matched_rule"`
	Reason        string   `json:"reason"`
	ExternalPaths []string `json:"external_paths,omitempty"`
	// Cause is the step that asked (engine.Decision.Cause), so that the
	// card says the true reason; empty for an ask recorded before the
	// approval history kept it.
	Cause string `json:"cause,omitempty"`
}

// Approval is one ask and its outcome. Values returned by the Manager are
// snapshots; treat ToolArgs as read-only.
type Approval struct {
	ID        string     `json:"id"`
	Status    Status     `json:"status"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
	Request   Request    `json:"request"`
	Asked     Asked      `json:"asked"`
	// Choice is the person's answer; empty for expired or cancelled asks.
	Choice Choice `json:"choice,omitempty"`
	// DecidedBy names the principal who answered, or "system".
	DecidedBy string `json:"decided_by,omitempty"`
	Comment   string `json:"comment,omitempty"`
	// Decision is the final decision, allow or deny; empty while pending.
	Decision string `json:"decision,omitempty"`
	// PersistedRule is the approval override written for allow_always.
	PersistedRule *policy.Override `json:"persisted_rule,omitempty"`
	// Grant is the grant an allow_session or allow_for answer made.
	Grant *grant.Grant `json:"grant,omitempty"`
	// Joins counts the identical asks that joined this one instead of prompting.
	Joins int `json:"joins,omitempty"`
}

// Pending reports whether the approval still waits for an answer.
func (a Approval) Pending() bool { return a.Status == StatusPending }

// Event is one change sent to subscribers.
type Event struct {
	Type     string   `json:"type"`
	Approval Approval `json:"approval"`
	// Local reports that the ask of an EventRequested was opened through
	// this Manager, not learned from another replica (shared mode), so that
	// what must happen once per ask, such as a webhook, happens on one
	// replica. Without a Shared store every event is Local.
	Local bool `json:"-"`
}

// Filter limits what an approver sees and may answer. An empty list means
// no limit on that dimension.
type Filter struct {
	Channels []string `json:"channels,omitempty"`
	Sessions []string `json:"sessions,omitempty"`
}

// MayAllowAlways reports whether a person seeing asks through the filter
// may answer allow_always: an always-allow rule holds on every channel and
// session, so a person limited to some of them may not write one
// (docs/decisions.md#channels-bind-the-token).
func (f Filter) MayAllowAlways() bool {
	return len(f.Channels) == 0 && len(f.Sessions) == 0
}

// MayAllowFor reports whether a person seeing asks through the filter may
// answer allow_for: its grant holds in every session of the ask's channel,
// so a person limited to some sessions may not give one (allow_session,
// bound to the ask's session, they may).
func (f Filter) MayAllowFor() bool { return len(f.Sessions) == 0 }

// MsgScopedFor is why a person limited to sessions may not answer allow_for.
const MsgScopedFor = "allow for a while would hold in every session, beyond the ones this token is limited to: answer allow_once, allow_session or deny"

// MsgScopedAlways is why a limited person may not answer allow_always.
const MsgScopedAlways = "always allow would hold on every channel and session, beyond the ones this token is limited to: answer allow_once or deny"

// Allows reports whether an approval is visible through the filter.
func (f Filter) Allows(a Approval) bool {
	if len(f.Channels) > 0 && !slices.Contains(f.Channels, a.Request.ChannelID) {
		return false
	}
	if len(f.Sessions) > 0 && !slices.Contains(f.Sessions, a.Request.SessionID) {
		return false
	}
	return true
}
