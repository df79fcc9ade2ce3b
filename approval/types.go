package approval

import (
	"errors"
	"slices"
	"time"
)

// Choice is a person's answer to an ask.
type Choice string

// The three answers a person can give.
const (
	ChoiceAllowOnce   Choice = "allow_once"
	ChoiceAllowAlways Choice = "allow_always"
	ChoiceDeny        Choice = "deny"
)

// Valid reports whether c is one of the three choices.
func (c Choice) Valid() bool {
	return c == ChoiceAllowOnce || c == ChoiceAllowAlways || c == ChoiceDeny
}

// Decision returns the final decision a choice gives: allow or deny.
func (c Choice) Decision() string {
	if c == ChoiceAllowOnce || c == ChoiceAllowAlways {
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
	// ErrInvalidChoice: the choice is not allow_once, allow_always or deny.
	ErrInvalidChoice = errors.New("approval: invalid choice")
	// ErrInvalidRequest: Create got something that is not an ask it may prompt for.
	ErrInvalidRequest = errors.New("approval: invalid request")
	// ErrNoPersister: allow_always was chosen but no Persister is configured.
	ErrNoPersister = errors.New("approval: always-allow is not available")
	// ErrClosed: the manager has been shut down.
	ErrClosed = errors.New("approval: manager shut down")
)

// MaxCommentLen is the longest comment Decide accepts, in bytes.
const MaxCommentLen = 2000

// Request is the tool call an approval asks about.
type Request struct {
	ToolName  string         `json:"tool_name"`
	ToolArgs  map[string]any `json:"tool_args"`
	ChannelID string         `json:"channel_id"`
	SessionID string         `json:"session_id"`
	Workspace string         `json:"workspace,omitempty"`
}

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
	PersistedRule map[string]any `json:"persisted_rule,omitempty"`
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
