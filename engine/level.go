package engine

import "github.com/toolgate/toolgate/policy"

// Level is a permission decision (policy.Level): Allow < Ask < Deny, so the
// strictest of two levels is the larger one.
type Level = policy.Level

// The three levels. The zero Level means "not configured".
const (
	LevelNone = policy.LevelNone
	Allow     = policy.Allow
	Ask       = policy.Ask
	Deny      = policy.Deny
)

// ParseLevel reads allow, ask or deny, ignoring case and surrounding space.
func ParseLevel(s string) (Level, bool) { return policy.ParseLevel(s) }

// Stricter returns the stricter of two levels.
func Stricter(a, b Level) Level { return policy.Stricter(a, b) }

// Mode is the permission_mode of a tiered policy (policy.Mode).
type Mode = policy.Mode

// The two modes; anything other than "strict" is normal.
const (
	ModeNormal = policy.ModeNormal
	ModeStrict = policy.ModeStrict
)

// ParseMode reads permission_mode: "strict" in any case is strict, anything
// else is normal (docs/configuration.md#permissions-keys).
func ParseMode(s string) Mode { return policy.ParseMode(s) }

// Severity is a rule's severity, mapped to a level by the mode (docs/decisions.md#severity-and-permission_mode).
type Severity = policy.Severity

// The severities. Unknown and missing severities count as High.
const (
	SeverityLow      = policy.SeverityLow
	SeverityMedium   = policy.SeverityMedium
	SeverityHigh     = policy.SeverityHigh
	SeverityCritical = policy.SeverityCritical
)

// ParseSeverity reads LOW, MEDIUM, HIGH or CRITICAL in any case.
func ParseSeverity(s string) (Severity, bool) { return policy.ParseSeverity(s) }

// SeverityLevel is the severity table of docs/decisions.md#severity-and-permission_mode.
func SeverityLevel(s Severity, m Mode) Level { return policy.SeverityLevel(s, m) }
