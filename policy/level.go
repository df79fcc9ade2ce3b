package policy

import "strings"

// Level is a permission decision. Its numeric order is its strictness:
// Allow < Ask < Deny, so the strictest of two levels is the larger one: max(a, b).
type Level uint8

// The three levels. The zero Level means "not configured".
const (
	LevelNone Level = iota
	Allow
	Ask
	Deny
)

// String returns the wire name of the level ("" for LevelNone).
func (l Level) String() string {
	switch l {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return ""
}

// MarshalText encodes the level by its wire name.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// ParseLevel reads allow, ask or deny, ignoring case and surrounding space.
func ParseLevel(s string) (Level, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "allow":
		return Allow, true
	case "ask":
		return Ask, true
	case "deny":
		return Deny, true
	}
	return LevelNone, false
}

// Mode is the permission_mode of a tiered policy.
type Mode uint8

// The two modes; anything other than "strict" is normal.
const (
	ModeNormal Mode = iota
	ModeStrict
)

// ParseMode reads permission_mode: "strict" in any case is strict, anything
// else is normal (docs/configuration.md#permissions-keys).
func ParseMode(s string) Mode {
	if strings.ToLower(strings.TrimSpace(s)) == "strict" {
		return ModeStrict
	}
	return ModeNormal
}

// String returns "normal" or "strict".
func (m Mode) String() string {
	if m == ModeStrict {
		return "strict"
	}
	return "normal"
}

// Severity is a rule's severity, mapped to a level by the mode (docs/decisions.md#severity-and-permission_mode).
type Severity uint8

// The severities. Unknown and missing severities count as High.
const (
	SeverityLow Severity = iota + 1
	SeverityMedium
	SeverityHigh
	SeverityCritical
)

// ParseSeverity reads LOW, MEDIUM, HIGH or CRITICAL in any case.
func ParseSeverity(s string) (Severity, bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "LOW":
		return SeverityLow, true
	case "MEDIUM":
		return SeverityMedium, true
	case "HIGH":
		return SeverityHigh, true
	case "CRITICAL":
		return SeverityCritical, true
	}
	return SeverityHigh, false
}

// String returns the upper-case name of the severity.
func (s Severity) String() string {
	switch s {
	case SeverityLow:
		return "LOW"
	case SeverityMedium:
		return "MEDIUM"
	case SeverityCritical:
		return "CRITICAL"
	}
	return "HIGH"
}

// SeverityLevel is the severity table of docs/decisions.md#severity-and-permission_mode.
func SeverityLevel(s Severity, m Mode) Level {
	switch s {
	case SeverityLow:
		return Allow
	case SeverityMedium:
		if m == ModeStrict {
			return Ask
		}
		return Allow
	case SeverityCritical:
		if m == ModeStrict {
			return Deny
		}
		return Ask
	}
	return Ask
}
