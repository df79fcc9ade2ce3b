package policy

import (
	"errors"
	"fmt"
)

// Problem is one validation problem of a policy, naming its place, such as
// "permissions.rules[3].pattern". A broken entry is inert (docs/configuration.md#validation).
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Error formats the problem as "path: message".
func (p Problem) Error() string { return p.Path + ": " + p.Message }

// FieldError is a value of a request that cannot stand, naming its field as
// the request wrote it ("rules[2].action", "tools", "pattern"). Callers
// tell kinds apart with errors.Is on the sentinels below, never by the
// message text.
type FieldError struct {
	Field   string
	Message string
	// Err is the kind of mistake (ErrInvalid unless a sentinel fits better).
	Err error
}

// Error formats the error as "field: message".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Unwrap returns the kind, for errors.Is.
func (e *FieldError) Unwrap() error { return e.Err }

// The kinds of FieldError.
var (
	// ErrInvalid is a value of the wrong type or outside its allowed set.
	ErrInvalid = errors.New("policy: invalid value")
	// ErrNoTools is a rule that names no tool.
	ErrNoTools = errors.New("policy: no tools")
	// ErrBadTools is a rule whose tools are unknown or of mixed categories;
	// the rule is skipped.
	ErrBadTools = errors.New("policy: unusable tools")
	// ErrNetworkTools is a rule for network tools, which never match
	// (docs/decisions.md#patterns).
	ErrNetworkTools = errors.New("policy: rule for network tools")
	// ErrBadPattern is a pattern that does not compile.
	ErrBadPattern = errors.New("policy: invalid pattern")
)

// fieldErr builds a FieldError of kind ErrInvalid.
func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...), Err: ErrInvalid}
}
