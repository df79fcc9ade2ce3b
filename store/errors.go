package store

import (
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// Sentinel errors of the edit operations, checked with errors.Is.
var (
	// ErrNotFound: the tool, rule, override or key to change is not there.
	ErrNotFound = errors.New("store: not found")
	// ErrExists: a rule or override with that id already exists.
	ErrExists = errors.New("store: already exists")
	// ErrPreconditionFailed: the If-Match ETag is stale.
	ErrPreconditionFailed = errors.New("store: precondition failed: the section changed")
	// ErrNotAsk: "always allow" was asked for a call whose decision is not ask.
	ErrNotAsk = errors.New("store: the current decision is not ask")
	// ErrNoPattern: "always allow" was asked for a call with no command or
	// path to remember (a tool that is neither shell nor path).
	ErrNoPattern = errors.New("store: the call has no command or path to remember")
	// ErrBrokenConfig: config.yaml does not parse, so it cannot be edited
	// safely; fix the file by hand first.
	ErrBrokenConfig = errors.New("store: config.yaml does not parse")
)

// Refusal is an edit (or export) refused for a reason a person may read as
// is: Message says it without a package prefix, where the error's text
// carries one for the logs. errors.Is(r, r.Kind) holds (ErrNotFound,
// ErrExists, ErrBrokenConfig).
type Refusal struct {
	Kind    error
	Message string
}

// Error is the message with the package's prefix.
func (r *Refusal) Error() string { return "store: " + r.Message }

// Unwrap returns the kind.
func (r *Refusal) Unwrap() error { return r.Kind }

// Refuse returns a Refusal of kind whose message is format's text.
func Refuse(kind error, format string, args ...any) error {
	return &Refusal{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// ValidationError is returned by an edit whose result would not validate.
// Nothing was written.
type ValidationError struct {
	Problems []policy.Problem
}

// Error lists the problems.
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Error()
	}
	return "store: invalid policy: " + strings.Join(parts, "; ")
}

func invalid(path, msg string) error {
	return &ValidationError{Problems: []policy.Problem{{Path: path, Message: msg}}}
}
