package store

import (
	"errors"
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
