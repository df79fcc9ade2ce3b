package engine

import (
	"encoding/json"

	"github.com/toolgate/toolgate/policy"
)

// Request is one tool call to decide: the body of POST /api/v1/evaluate.
type Request struct {
	// Call is the tool call, read once where it came in (NewCall).
	Call      Call   `json:"-"`
	ChannelID string `json:"channel_id,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	// Home is the home of the user the agent runs as, which ~ and $HOME
	// name in its arguments; empty means the server user's (Options.HomeDir).
	// The hooks fill it from what `toolgate hook` sends.
	Home  string `json:"-"`
	Scope *Scope `json:"scope,omitempty"`
	// SessionID is the agent's session, which a session grant is bound to
	// (grants.go); empty for a call that names none.
	SessionID string `json:"-"`
	// TokenID is the id of the token the call was made with: a session
	// grant holds for calls of its session made with the same token, so
	// that another agent naming that session gains nothing (grants.go).
	TokenID string `json:"-"`
	// Explain asks for the Trace of the steps taken.
	Explain bool `json:"explain,omitempty"`
}

// Scope marks a digital-persona (avatar) call: with both AvatarMode and
// GroupDigitalAvatar true it is decided under the owner scopes of its
// channel and principal (docs/decisions.md#digital-persona-and-owner-scopes; see Persona).
type Scope struct {
	AvatarMode         bool   `json:"avatar_mode"`
	GroupDigitalAvatar bool   `json:"group_digital_avatar"`
	PrincipalUserID    string `json:"principal_user_id"`
}

// Decision is the engine's answer for one Request.
type Decision struct {
	Level policy.Level
	// MatchedRule names what decided; empty when no rule applies (a disabled
	// engine, a skipped channel), which the wire shows as null.
	MatchedRule string
	Reason      string
	// ExternalPaths are the resolved paths outside the workspace, if any.
	ExternalPaths []string
	// FromOverride is true when an approval override allowed the call.
	FromOverride bool
	// Cause names the step that set the level, for the words a person
	// reads: CauseRule, CauseToolLevel, CauseDefault, CauseEscalation,
	// CauseExternal or CausePathForm; empty for a disabled engine, a
	// skipped channel or a persona call.
	Cause string
	// Trace lists the steps taken, when the request asked for Explain.
	Trace []Step
}

// The causes of a decision (Decision.Cause).
const (
	// CauseRule: a rule (user or built-in) or an override decided.
	CauseRule = "rule"
	// CauseToolLevel: the tool's own level decided.
	CauseToolLevel = "tool_level"
	// CauseDefault: no rule or tool level applied; the defaults decided.
	CauseDefault = "default"
	// CauseEscalation: the policy allowed, and the shell escalation made
	// it ask (operators, a command that does not parse or is not known, an
	// option that writes or runs under an allow rule).
	CauseEscalation = "escalation"
	// CauseExternal: a path outside the workspace made it stricter.
	CauseExternal = "external"
	// CausePathForm: another form of a path (resolved, cleaned, a glob)
	// met a stricter rule.
	CausePathForm = "path_form"
)

// Step is one entry of an explain trace.
type Step struct {
	// Name is the step: enabled, channel, baseline, builtin_hits, user_hits,
	// approval_overrides, finalize, tool_level, defaults, fallback, legacy,
	// escalation, shell, external_directory; for a persona call also
	// persona, owner_level, global_level and persona_decision.
	Name string `json:"step"`
	// Result is the level this step produced, if any.
	Result string `json:"result,omitempty"`
	// Rule is the rule this step produced or matched, if any.
	Rule string `json:"rule,omitempty"`
	// Detail says in words what the step looked at.
	Detail string `json:"detail,omitempty"`
	// Hits are the rules that matched at this step.
	Hits []string `json:"hits,omitempty"`
	// Decisive marks the step whose result stood as the final decision.
	Decisive bool `json:"decisive,omitempty"`
}

// Options are the facts the engine needs from outside, fixed at compile time.
type Options struct {
	// Workspace is the server's --workspace, used when a request names none.
	Workspace string
	// HomeDir is the server user's home, for ~ and $HOME (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
	HomeDir string
	// ResolvePath resolves an absolute, forward-slash path as the kernel
	// would (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm): the path may hold . and .. components, and each
	// .. must be applied after the symlinks before it are followed (a link
	// to / plus link/../.. is /); a missing tail is appended as written. It
	// returns "" when the answer cannot be known (a .. after a part that
	// could not be looked at), and the engine then counts the path as
	// external. A resolver that returns its argument is also fine: the
	// engine cleans the result. Nil cleans paths lexically.
	ResolvePath func(string) string
	// KindOf tells what an absolute path is, in one lookup that does not
	// follow a final symlink: the engine asks it about the bare words of a
	// shell command (cat evil, where evil links out of the workspace;
	// grep -r . secrets, where secrets is a folder) and resolves only the
	// links with ResolvePath. One lookup a word, since on the hot path each
	// system call costs more than the rest of a benign call's decision.
	// Nil (or a nil ResolvePath) looks no bare word up. It must agree with
	// ResolvePath; fsview gives both for a real filesystem (store passes them).
	KindOf func(string) FileKind
	// CallKindOf, when set with KindOf, makes the KindOf one call (or one
	// batch) uses: one that may look at each directory once for that call
	// and answer from a cache keyed by the directory's change stamp
	// (fsview.KindCache). It must answer as KindOf would at some moment
	// during the call. Nil uses KindOf.
	CallKindOf func() func(string) FileKind
	// Glob expands an absolute filename glob (* ? [...]) against the files
	// that exist, as the shell would: the engine asks it about the glob
	// words of a shell command (cat .en?), so that path rules see the files
	// they name. Nil expands nothing. fsview gives one for a real
	// filesystem, bounded in the matches it returns.
	Glob func(pattern string) []string
	// BatchResolvePath, when set, makes the ResolvePath EvaluateBatch uses
	// for one batch: one that may remember what it looked up, since the
	// calls of a batch are decided as one snapshot. Nil uses ResolvePath.
	BatchResolvePath func() func(string) string
	// CheckedChannels is the set of channels that are checked; nil means
	// web, acp, cli and tui.
	CheckedChannels []string
}

// FileKind is what one lookup of a path found, without following a final
// symlink.
type FileKind uint8

const (
	// NoFile: nothing by that name, or it could not be looked at.
	NoFile FileKind = iota
	// PlainFile: a file that is neither a folder nor a link.
	PlainFile
	// Folder: a directory.
	Folder
	// Symlink: a symbolic link, dangling or not.
	Symlink
)

// requestWire is the JSON form of a Request: the evaluate body's fields.
type requestWire struct {
	ToolName  string         `json:"tool_name"`
	ToolArgs  map[string]any `json:"tool_args"`
	ChannelID string         `json:"channel_id,omitempty"`
	Workspace string         `json:"workspace,omitempty"`
	Scope     *Scope         `json:"scope,omitempty"`
	Explain   bool           `json:"explain,omitempty"`
}

// MarshalJSON writes the request as the evaluate body.
func (r Request) MarshalJSON() ([]byte, error) {
	return json.Marshal(requestWire{ToolName: r.Call.Tool(), ToolArgs: r.Call.Args(), ChannelID: r.ChannelID,
		Workspace: r.Workspace, Scope: r.Scope, Explain: r.Explain})
}

// UnmarshalJSON reads the evaluate body, and its Call once (NewCall). The
// fields JSON does not carry (Home, SessionID, TokenID) are left empty.
func (r *Request) UnmarshalJSON(b []byte) error {
	var w requestWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = Request{Call: NewCall(w.ToolName, w.ToolArgs), ChannelID: w.ChannelID, Workspace: w.Workspace, Scope: w.Scope, Explain: w.Explain}
	return nil
}
