// Package templates holds toolgate's server-rendered admin pages as templ
// components. Every component takes a typed props struct and does no I/O:
// the web package gathers the data and the components only render it.
package templates

// Nav is what the layout needs on every signed-in page.
type Nav struct {
	// Active is the path of the current page, to highlight its link.
	Active string
	// User and Role name who is signed in.
	User string
	Role string
	// CSRF is the session's CSRF token, put in a hidden field of every form.
	CSRF string
	// CanEdit is false for a read-only role: no edit forms are rendered.
	CanEdit bool
	// CanManageTokens is true for a role that may list and make tokens; the
	// Tokens link is shown only then.
	CanManageTokens bool
	// Flash is the one-time message of the last change, if any.
	Flash Flash
	// Pending is the number of asks waiting for this person, shown in the
	// menu and the tab title.
	Pending int
}

// Flash is a one-time message shown at the top of a page.
type Flash struct {
	// Kind is "ok" or "error".
	Kind string
	Text string
}

// Levels are the three permission levels, in strictness order.
var Levels = []string{"allow", "ask", "deny"}

// Severities are the rule severities, in order.
var Severities = []string{"LOW", "MEDIUM", "HIGH", "CRITICAL"}

// LoginProps are the login page's.
type LoginProps struct {
	CSRF  string
	Error string
}

// MessageProps are a page that only says something: a conflict, a refusal,
// a missing entry.
type MessageProps struct {
	Nav    Nav
	Title  string
	Text   string
	TestID string
	// Link and LinkText offer a way on, such as reloading the page.
	Link     string
	LinkText string
	// Typed are the values of a refused form beside the current ones.
	Typed []TypedValue
}

// TypedValue is one field of a refused form: what was typed and what the
// policy holds now.
type TypedValue struct {
	Name, Typed, Current string
}

// SeverityRow is one row of the severity table for the current mode.
type SeverityRow struct {
	Severity string
	Level    string
}

// Count is one number on the overview.
type Count struct {
	Label string
	N     int
	Link  string
}

// OverviewProps are the overview page's.
type OverviewProps struct {
	Nav      Nav
	ETag     string
	Enabled  bool
	Schema   string
	Tiered   bool
	Mode     string
	Severity []SeverityRow
	Defaults string
	Counts   []Count
	Problems []string
	// SetAside is true when config.yaml was set aside whole (it does not
	// parse, is empty or missing) and the last good policy decides.
	SetAside bool
	// Pending is the number of asks waiting; PendingKnown is false when no
	// approval manager is wired.
	Pending      int
	PendingKnown bool
}

// ToolRow is one tool on the tools page.
// ToolOption is one choice of a tool list: the tool name, and how the
// list labels it (an MCP tool's server and tool; empty for others).
type ToolOption struct {
	Value string
	Label string
}

// ToolRow is one tool on the tools page.
type ToolRow struct {
	Name     string
	Category string
	// Level is the configured level, empty when the tool is not configured.
	Level string
	// Legacy marks a legacy entry (a map with "*" and patterns).
	Legacy bool
}

// ToolsProps are the tools page's.
type ToolsProps struct {
	Nav     Nav
	ETag    string
	Tools   []ToolRow
	Default string
}

// RuleFields are the fields of a rule that the rules page shows, edits
// and tests, as text.
type RuleFields struct {
	ID          string
	Tools       string
	Pattern     string
	MatchType   string
	Action      string
	Severity    string
	Description string
}

// RuleRow is one rule in a rules table.
type RuleRow struct {
	RuleFields
	Source string
	// Level is what the rule gives in the current mode: its action, or its
	// severity's level.
	Level string
	// Shadow: the rule decides nothing yet (mode: shadow).
	Shadow bool
}

// ShadowProps is the shadow rules page: each shadow rule with the logged
// calls it would have decided otherwise.
type ShadowProps struct {
	Nav  Nav
	ETag string
	// Off: the decision log is off, so nothing is recorded.
	Off   bool
	Rules []ShadowRuleView
	Error string
}

// ShadowRuleView is one shadow rule and the calls it would change.
type ShadowRuleView struct {
	Rule  RuleRow
	Calls []ShadowCallRow
	// More: more calls than shown.
	More bool
}

// ShadowCallRow is one logged call a shadow rule would decide otherwise.
type ShadowCallRow struct {
	Tool, Summary, Level, ShadowLevel string
	// At is when it was decided (UTC text), AtISO the same in RFC 3339.
	At, AtISO string
}

// RuleForm is the add or edit form of a rule.
type RuleForm struct {
	// Editing is true when OrigID names the rule being edited.
	Editing bool
	OrigID  string
	RuleFields
	// Match and NoMatch are the rule's examples, one a line.
	Match   string
	NoMatch string
	Error   string
}

// TestResult is one sample call of the "test this rule" box.
type TestResult struct {
	Sample  string
	Tool    string
	Matched bool
	Level   string
	Rule    string
}

// TestBox is the "test this rule" box: a rule and sample calls in, which of
// them it matches out.
type TestBox struct {
	Tools     string
	Pattern   string
	MatchType string
	Action    string
	Severity  string
	Samples   string
	Ran       bool
	Error     string
	Results   []TestResult
}

// RulesProps are the rules page's.
type RulesProps struct {
	Nav Nav
	// Mode is the permission mode that maps severities to levels.
	Mode          string
	ETag          string
	Rules         []RuleRow
	Builtin       []RuleRow
	BuiltinSource string
	Form          RuleForm
	Test          TestBox
	// Preview is what the rule in the form would change, when asked.
	Preview RulePreview
	// Tools are the choices of the tools field: the known tools and the
	// MCP tools seen.
	Tools []ToolOption
}

// RulePreview is the impact preview of a rule before it is saved: the
// logged calls that the policy with the rule would decide differently.
type RulePreview struct {
	Ran      bool
	Replayed int
	// Calls is how many replayed calls would change; Changes groups the
	// identical ones.
	Calls    int
	Changes  []PreviewRow
	Problems []string
	Note     string
}

// PreviewRow is one logged call whose decision would change.
type PreviewRow struct {
	ID, Tool, Summary string
	From, FromRule    string
	To, ToRule        string
	// Count is how many logged calls were this same call.
	Count int
}

// DirRow is one entry of external_directory.
type DirRow struct {
	Key   string
	Level string
}

// OverrideRow is one approval override.
type OverrideRow struct {
	ID        string
	Tools     string
	MatchType string
	Pattern   string
	Action    string
	Source    string
	Created   string
	// ApprovedBy is who answered "always allow", when the entry says.
	ApprovedBy string
}

// TrustedResult is what adding a trusted directory did.
type TrustedResult struct {
	Dir      string
	Tiered   bool
	Created  []OverrideRow
	Existing []string
}

// DirectoriesProps are the external directories page's.
type DirectoriesProps struct {
	Nav  Nav
	ETag string
	// Star is the level of "*" (any external path).
	Star    string
	Entries []DirRow
	Trusted *TrustedResult
}

// OverridesProps are the approval overrides page's.
type OverridesProps struct {
	Nav       Nav
	ETag      string
	Overrides []OverrideRow
}

// PlayForm is the playground's tool call.
type PlayForm struct {
	Tool      string
	Args      string
	Command   string
	Path      string
	Channel   string
	Workspace string
}

// StepRow is one step of an explain trace.
type StepRow struct {
	Name     string
	Result   string
	Rule     string
	Detail   string
	Hits     string
	Decisive bool
}

// PlayResult is the decision of the playground's call.
type PlayResult struct {
	Level         string
	MatchedRule   string
	Reason        string
	ExternalPaths []string
	Steps         []StepRow
}

// PlaygroundProps are the playground page's.
type PlaygroundProps struct {
	Nav    Nav
	Form   PlayForm
	Tools  []ToolOption
	Error  string
	Result *PlayResult
}

// ApprovalRow is one pending ask.
type ApprovalRow struct {
	ID      string
	Tool    string
	Summary string
	// Server and ServerTool are an MCP call's server and tool
	// (mcp__SERVER__TOOL); empty for any other tool.
	Server     string
	ServerTool string
	// ArgList are an MCP call's arguments one by one, redacted: a string
	// as it is, any other value as indented JSON.
	ArgList []ArgLine
	// Hidden is true when the call held characters that hide or reorder
	// text (shown as <U+XXXX>): the card warns.
	Hidden bool
	// Args are the arguments as indented JSON, redacted.
	Args    string
	Channel string
	Session string
	// Reason says why in words: the deciding rules' descriptions.
	Reason string
	// EngineReason is the engine's own reason, naming the rule id.
	EngineReason string
	Rule         string
	// External lists the paths outside the workspace, joined; "none" when
	// the call names none.
	External      string
	ExternalPaths []string
	Risk          RiskCue
	// Preview is the start of what a write or edit would put in a file.
	Preview []ContentPreview
	// Remember and RememberType are the pattern and match type an "always
	// allow" would write; empty when always-allow is not possible.
	Remember     string
	RememberType string
	Created      string
	// HasSession is false for an ask that came without a session id: it
	// cannot be remembered for its session.
	HasSession bool
	// NoAllowFor is set for a person limited to some sessions: an "allow
	// for" grant holds in every session of the channel, so it is not
	// offered to them.
	NoAllowFor bool
	// Expires is the expiry as a person reads it (15:04:05 UTC), ExpiresISO
	// the same for machines, ExpiresIn the time left when rendered.
	Expires    string
	ExpiresISO string
	ExpiresIn  string
}

// ArgLine is one argument of a call as a person reads it.
type ArgLine struct {
	Key   string
	Value string
}

// RiskCue says how much care an ask needs.
type RiskCue struct {
	// Class is high, medium or low.
	Class string
	// Severity is the worst severity of the deciding rules, if any.
	Severity string
	// Source is what asked: a built-in safety rule, your rule, the tool
	// level, the default level or the external directory check.
	Source string
	// Category is the tool's kind: shell, path, network or unknown.
	Category string
	External bool
}

// ContentPreview is the start of one content argument of a write or edit.
type ContentPreview struct {
	Label     string
	Text      string
	Size      string
	Truncated bool
}

// AnsweredRow is one recently answered or expired ask.
type AnsweredRow struct {
	Tool, Summary string
	// Status is allowed, denied, expired or cancelled.
	Status string
	Choice string
	By     string
	When   string
	// WhenISO is When as RFC 3339, for the viewer's own time zone.
	WhenISO string
	// Until is when the grant a scoped answer made ends (UTC text), UntilISO
	// the same in RFC 3339; empty for other answers.
	Until, UntilISO string
	// GrantID names that grant, for a link to the Grants page.
	GrantID string
}

// ApprovalsProps are the approvals inbox's.
type ApprovalsProps struct {
	Nav Nav
	// Available is false when no approval manager is wired.
	Available bool
	CanDecide bool
	Pending   []ApprovalRow
	// More counts the pending asks not shown: the page shows the oldest
	// MaxShownPending, so that a flood of asks cannot make it unusable.
	More int
	// Recent are the newest answered asks, newest first.
	Recent []AnsweredRow
}

// ToolGroup is the tools of one category, in the page's order.
type ToolGroup struct {
	Category string
	Tools    []ToolRow
}

// toolCategories is the order of the tools page's groups.
var toolCategories = []string{"shell", "path", "network", "mcp", "other"}

// toolGroups groups rows by category, keeping their order within each.
func toolGroups(rows []ToolRow) []ToolGroup {
	var out []ToolGroup
	for _, c := range toolCategories {
		g := ToolGroup{Category: c}
		for _, r := range rows {
			if r.Category == c {
				g.Tools = append(g.Tools, r)
			}
		}
		if len(g.Tools) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// GrantDuration is one "allow for" choice of a card: ttl_seconds and the
// message keys of its button and its short label.
type GrantDuration struct {
	Seconds int
	// Main is the big button's duration; the others are small buttons
	// beside it.
	Main bool
}

// GrantDurations are the "allow for" choices of a card, the main one
// first.
var GrantDurations = []GrantDuration{{Seconds: 3600, Main: true}, {Seconds: 900}, {Seconds: 28800}, {Seconds: 86400}}

// GrantRow is one live grant on the Grants page.
type GrantRow struct {
	ID   string
	Tool string
	// Pattern and MatchType are what the grant covers; Exact is set for a
	// grant bound to the arguments' digest ("this exact call"), Summary is
	// the call the person saw.
	Pattern, MatchType string
	Exact              bool
	Summary            string
	// Scope is session or timed; ScopeText says it in words.
	Scope, ScopeText string
	Session, Agent   string
	Channel          string
	GrantedBy        string
	ApprovalID       string
	// Created and Expires are UTC text, with their RFC 3339 forms for the
	// viewer's time zone; ExpiresIn is the time left when rendered.
	Created, CreatedISO string
	Expires, ExpiresISO string
	ExpiresIn           string
}

// GrantFilter is the Grants page's filter, as given in the query.
type GrantFilter struct {
	Agent, Session, Tool string
}

// Any reports whether the filter narrows the list.
func (f GrantFilter) Any() bool { return f.Agent != "" || f.Session != "" || f.Tool != "" }

// GrantsProps are the Grants page's: the live grants (filtered), the
// choices of the filters, and the always-allow overrides.
type GrantsProps struct {
	Nav Nav
	// Available is false when this server keeps no grants.
	Available bool
	Filter    GrantFilter
	Grants    []GrantRow
	// Live counts the live grants before the filter.
	Live int
	// Agents, Sessions and Tools are the values the live grants have, for
	// the filters.
	Agents, Sessions, Tools []string
	// CanRevoke: the person may revoke grants (answers asks).
	CanRevoke bool
	// Overrides are the approval overrides written by "always allow";
	// ETag is the policy's, for their revoke, which CanRevokeAlways allows
	// (a policy edit: admins only, as on the Overrides page).
	Overrides       []OverrideRow
	ETag            string
	CanRevokeAlways bool
}
