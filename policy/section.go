package policy

// Section is the typed `permissions` section of config.yaml (docs/configuration.md#permissions-keys).
// DecodeSection builds it leniently: a value of the wrong type is reported
// in Problems and left out (docs/configuration.md#validation), the rest stands.
type Section struct {
	// Enabled is the master switch; absent means on. A non-boolean value
	// is read as before (false, "false", "no", "off", "0" disable) and
	// reported.
	Enabled bool
	// Schema is schema (else version) as text, "" when both are absent;
	// SchemaKey says which key held it.
	Schema    string
	SchemaKey string
	// Tiered is IsTieredSchema(Schema).
	Tiered bool
	// Mode is permission_mode; ModeText is the text written ("" when
	// absent), kept so an unknown mode can be shown and written back.
	Mode     Mode
	ModeText string
	// Tools are the entries of tools, sorted by name.
	Tools []ToolSetting
	// Defaults is defaults."*" (LevelNone when absent or invalid).
	Defaults Level
	// Rules and Overrides are the usable entries of rules and
	// approval_overrides, in file order; an entry that is not a mapping is
	// left out (and reported).
	Rules     []Rule
	Overrides []Rule
	External  ExternalDirs
	Owners    OwnerScopes
	// DenyGuidance is deny_guidance_message, trimmed.
	DenyGuidance string
	// Extra holds the keys the section does not know, as decoded; each is
	// reported and ignored.
	Extra map[string]any
	// Problems is every problem decoding found, each naming its place.
	Problems []Problem `json:"-"`
}

// ToolSetting is one entry of permissions.tools: a level, or a mapping
// with "*" and, in the legacy schema, patterns.
type ToolSetting struct {
	Name string
	// Level is the tool's level; LevelNone when absent or invalid.
	Level Level
	// Star says the level was written as {"*": level}, which names it
	// tools.<name>.* in matched_rule.
	Star bool
	// Patterns are tools.<name>.patterns of the legacy schema, sorted by
	// pattern text; never read in the tiered schema.
	Patterns []LegacyPattern
}

// LegacyPattern is one entry of tools.<tool>.patterns (legacy schema).
type LegacyPattern struct {
	Pattern string
	Level   Level
}

// Rule is one parameter-level rule, built-in rule or approval override
// (docs/configuration.md#permissions-keys). Override is the same shape.
type Rule struct {
	// Index is the entry's place in its list, which problem paths and
	// file order use.
	Index int
	ID    string
	// Tools is nil when the tools value cannot be read (reported).
	Tools     []string
	Pattern   string
	MatchType string
	// Action is the rule's level when it has one; Severity is 0 when
	// absent. (The two small fields sit together to keep a Rule small.)
	Action   Level
	Severity Severity
	// BadAction is an action that is not a level: the rule is inert
	// (docs/configuration.md#validation). BadSeverity is an unknown severity, which reads as
	// HIGH (Severity is then SeverityHigh).
	BadAction   string
	BadSeverity string
	Description string
	Source      string
	// Mode is "shadow" for a rule evaluated beside the policy in force
	// without changing any decision (docs/configuration.md#shadow-rules),
	// else "" (enforced).
	Mode string
	// Examples are values the rule must match and must not match, checked
	// whenever the policy is written or loaded (docs/configuration.md#rule-examples);
	// nil when the rule has none.
	Examples *Examples
	// Extra holds the other keys (approved_by, created_at, ...), which the
	// engine ignores.
	Extra map[string]any
}

// Examples are a rule's own tests: values of the kind the rule matches (a
// command for a shell tool's rule, a path for a path tool's, the
// arguments' JSON for a match_type: args rule) that it must match (Match)
// and must not match (NoMatch).
type Examples struct {
	Match   []string
	NoMatch []string
}

// RuleModeShadow is the mode of a shadow rule; RuleModeEnforce (or no mode)
// enforces the rule.
const (
	RuleModeShadow  = "shadow"
	RuleModeEnforce = "enforce"
)

// Shadow reports whether the rule is a shadow rule.
func (r *Rule) Shadow() bool { return r.Mode == RuleModeShadow }

// ExampleKeys are the keys of a rule's examples mapping.
const (
	ExampleMatch   = "match"
	ExampleNoMatch = "no_match"
)

// Override is an approval override: a Rule of which only action: allow
// entries take part (docs/decisions.md#the-order-of-the-steps step 4).
type Override = Rule

// Inert reports whether the rule can never match: its action is not a
// level, or its tools cannot be read.
func (r *Rule) Inert() bool { return r.BadAction != "" || r.Tools == nil }

// Level is the level the rule gives in mode m: its action, else its
// severity (missing or unknown = HIGH) through the mode's table
// (docs/decisions.md#severity-and-permission_mode). ok is false for an inert action.
func (r *Rule) Level(m Mode) (Level, bool) {
	if r.BadAction != "" {
		return LevelNone, false
	}
	if r.Action != LevelNone {
		return r.Action, true
	}
	sev := r.Severity
	if sev == 0 {
		sev = SeverityHigh
	}
	return SeverityLevel(sev, m), true
}

// ExternalDirs is permissions.external_directory: one level for every path
// outside the workspace, or path-prefix keys with a "*" default.
type ExternalDirs struct {
	// Fixed is a plain level written for the whole section.
	Fixed bool
	// Level is the plain level when Fixed (Ask when it was invalid).
	Level Level
	// Star is the "*" level of a mapping (Ask when absent).
	Star Level
	// StarSet says "*" was written.
	StarSet bool
	// Keys are the path-prefix keys with a valid level, sorted by key text
	// as written.
	Keys []ExternalKey
}

// ExternalKey is one path-prefix key of external_directory.
type ExternalKey struct {
	Key   string
	Level Level
}

// OwnerScopes is permissions.owner_scopes: channel id -> principal user id
// -> scope, as JiuwenSwarm writes it (issues 12, 16).
type OwnerScopes struct {
	// Configured is true when owner_scopes is a non-empty mapping, even if
	// every channel in it is broken.
	Configured bool
	// Channels are sorted by channel id.
	Channels []OwnerChannel
}

// OwnerChannel is owner_scopes.<channel>.
type OwnerChannel struct {
	Channel string
	// Earlier marks a channel entry that is really a scope written in
	// toolgate's earlier shape (owner_scopes.<principal>.tools): it is inert
	// and every persona call of that principal is denied.
	Earlier bool
	// Principals are sorted by principal user id.
	Principals []OwnerScope
}

// OwnerScope is owner_scopes.<channel>.<principal>.
type OwnerScope struct {
	Principal string
	// Broken is set when the scope, its tools or its defaults is not a
	// mapping: every call under it is denied (fail closed).
	Broken bool
	// Tools are sorted by tool name.
	Tools []OwnerTool
	// Defaults is defaults."*" (LevelNone when absent; Deny when invalid).
	Defaults Level
}

// OwnerTool is owner_scopes.<channel>.<principal>.tools.<tool>.
type OwnerTool struct {
	Tool string
	// Broken is set when the entry is neither a level nor a mapping, or its
	// patterns are not a mapping: the tool is denied under the scope.
	Broken bool
	// Level is the plain level or "*" (LevelNone when absent; Deny when
	// invalid); Star says it was written as "*".
	Level Level
	Star  bool
	// Patterns are sorted by pattern text.
	Patterns []LegacyPattern
}
