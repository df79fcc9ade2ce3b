package service

import (
	"errors"
	"fmt"
	"net/http"
	"syscall"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/history"
)

// Error is a classified error: its kind, a stable code, a message fit to
// show a person, and details naming fields. REST writes it as
// {"error": {...}} with the HTTP status of its kind (api's httpStatus, the
// one place kinds become statuses); JSON-RPC, the websocket and the pages
// read the same fields.
type Error struct {
	Kind    Kind     `json:"-"`
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Details []Detail `json:"details,omitempty"`
	// Cause is the error classified, for logs and errors.Is; never shown.
	Cause error `json:"-"`
}

// Detail names one problem, by field or place.
type Detail struct {
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// Error formats the error as "code: message".
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Field is the field of the first detail, or "".
func (e *Error) Field() string {
	if len(e.Details) == 0 {
		return ""
	}
	return e.Details[0].Field
}

// Kind is what went wrong, in the use case's terms: each door (REST,
// JSON-RPC, the pages) answers a kind its own way. The zero Kind is
// KindInternal, so an Error made without one fails as an internal error.
type Kind uint8

// Kinds of the errors.
const (
	// KindInternal: the server failed; nothing the caller can fix.
	KindInternal Kind = iota
	// KindInvalid: the request is malformed or names a value not allowed.
	KindInvalid
	// KindUnauthenticated: no valid credential, or the session has ended.
	KindUnauthenticated
	// KindForbidden: the caller may not do this.
	KindForbidden
	// KindNotFound: no such thing, or none the caller may see.
	KindNotFound
	// KindMethodNotAllowed: the route exists, not with this method.
	KindMethodNotAllowed
	// KindConflict: the state does not allow it (already answered, exists).
	KindConflict
	// KindStale: the caller's version (If-Match) is not the current one.
	KindStale
	// KindTooLarge: the request body is over its limit.
	KindTooLarge
	// KindTooMany: the caller is over a rate or a cap.
	KindTooMany
	// KindUnavailable: a storage or service cannot be reached or written
	// now; trying again later may work.
	KindUnavailable
	// KindStorageFull: the disk is full or a size limit is reached.
	KindStorageFull
)

// Codes of the errors.
const (
	CodeBadRequest         = "bad_request"
	CodeInvalid            = "invalid"
	CodeUnauthorized       = "unauthorized"
	CodeForbidden          = "forbidden"
	CodeNotFound           = "not_found"
	CodeConflict           = "conflict"
	CodePreconditionFailed = "precondition_failed"
	CodeTooLarge           = "too_large"
	CodeInternal           = "internal"
	CodeUnavailable        = "unavailable"
	CodeMethodNotAllowed   = "method_not_allowed"
	CodeStorageFull        = "storage_full"
	CodeStorageReadOnly    = "storage_read_only"
)

// Forbidden is a KindForbidden error naming field: the caller may not ask for this value.
func Forbidden(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	e := &Error{Kind: KindForbidden, Code: CodeForbidden, Message: msg}
	if field != "" {
		e.Details = []Detail{{Field: field, Message: msg}}
	}
	return e
}

// BadRequest is a KindInvalid error naming field (may be empty).
func BadRequest(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	e := &Error{Kind: KindInvalid, Code: CodeBadRequest, Message: msg}
	if field != "" {
		e.Details = []Detail{{Field: field, Message: msg}}
	}
	return e
}

// Messages of classified errors that callers (the always-allow button, the
// /check deny reason) show as they are.
const (
	MsgNoPattern   = "always allow needs a command or a path to remember; this call has neither: answer allow_once or deny"
	MsgNotAsk      = "always allow is only for a call the policy asks about, and it no longer does; answer allow_once or deny"
	MsgStale       = "the permissions section changed since that ETag; GET it again"
	MsgUnavailable = "the storage cannot be reached right now; nothing was changed, try again shortly"
	// MsgApprovalsUnavailable is the reason of a /check denied because the
	// ask could not be stored (openapi.yaml: new asks answer deny).
	MsgApprovalsUnavailable = "denied: the approval service is unavailable (its database cannot be reached), so no one can be asked"
)

// Classify turns any error into an Error. It is the one classification of
// the server: REST, JSON-RPC, the websocket and the pages all call it. The
// switch is explicit so that a new sentinel is one new case here
// (errors_test.go fails for a sentinel without one).
func Classify(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var (
		ve     *store.ValidationError
		fe     *policy.FieldError
		afe    *approval.FieldError
		gie    *grant.InvalidError
		maxErr *http.MaxBytesError
	)
	notFound := func(msg string) *Error {
		return &Error{Kind: KindNotFound, Code: CodeNotFound, Message: msg, Cause: err}
	}
	conflict := func(msg string) *Error {
		return &Error{Kind: KindConflict, Code: CodeConflict, Message: msg, Cause: err}
	}
	unavailable := func(msg string) *Error {
		return &Error{Kind: KindUnavailable, Code: CodeUnavailable, Message: msg, Cause: err}
	}
	switch {
	case errors.As(err, &maxErr):
		return &Error{Kind: KindTooLarge, Code: CodeTooLarge,
			Message: fmt.Sprintf("request body is larger than %d bytes", maxErr.Limit), Cause: err}
	case errors.As(err, &ve):
		return validation(ve, err)
	case errors.As(err, &fe):
		return withCause(BadRequest(fe.Field, "%s", fe.Message), err)
	// The storage: a database that cannot be reached first, since its
	// errors may wrap others.
	case errors.Is(err, store.ErrUnavailable):
		return unavailable(MsgUnavailable)
	case errors.Is(err, store.ErrNotFound):
		return notFound(refusal(err, "not found"))
	case errors.Is(err, auth.ErrNotFound):
		return notFound("token not found")
	case errors.Is(err, store.ErrExists):
		return conflict(refusal(err, "already exists"))
	case errors.Is(err, store.ErrPreconditionFailed):
		return &Error{Kind: KindStale, Code: CodePreconditionFailed, Message: MsgStale, Cause: err}
	case errors.Is(err, store.ErrBrokenConfig):
		return conflict(refusal(err, "config.yaml does not parse"))
	case errors.Is(err, store.ErrNotSection):
		// The shared database's document holds more than the section:
		// as with a broken config.yaml, it is fixed by hand first.
		return conflict("the policy document in the database is not a permissions section alone")
	case errors.Is(err, store.ErrNoDocument):
		// Before the first replica imported a document: it comes shortly.
		return unavailable("the policy is not in the database yet")
	case errors.Is(err, store.ErrNoPattern), errors.Is(err, policy.ErrNothingToRemember):
		// "always allow" for a call with nothing to remember (a network
		// tool): the choice cannot be honoured, the ask stays pending.
		return withCause(BadRequest("choice", MsgNoPattern), err)
	case errors.Is(err, store.ErrNotAsk):
		// The policy changed since the ask: it no longer asks.
		return conflict(MsgNotAsk)
	case errors.Is(err, auth.ErrNoSession):
		return &Error{Kind: KindUnauthenticated, Code: CodeUnauthorized, Message: "the session has ended; sign in again", Cause: err}
	case errors.Is(err, policy.ErrNotObject):
		return withCause(BadRequest("", "the body must be a JSON object (the permissions section)"), err)
	case errors.Is(err, policy.ErrNoTool):
		return withCause(BadRequest("tool_name", "the tool name is empty"), err)
	case errors.Is(err, policy.ErrInvalid), errors.Is(err, policy.ErrNoTools), errors.Is(err, policy.ErrBadTools),
		errors.Is(err, policy.ErrNetworkTools), errors.Is(err, policy.ErrBadPattern):
		// A kind of policy.FieldError arriving without its field.
		return withCause(BadRequest("", "%s", policyKindWords(err)), err)
	case errors.Is(err, auth.ErrBadRole):
		return withCause(BadRequest("role", "%v", err), err)
	case errors.Is(err, history.ErrBadCursor):
		return withCause(BadRequest("cursor", "cursor must be a next_cursor of an earlier page"), err)
	// Approvals.
	case errors.Is(err, approval.ErrNotFound):
		return notFound("no approval has this id")
	case errors.Is(err, approval.ErrAlreadyDecided):
		return conflict("this approval was already answered; the first answer stands")
	case errors.Is(err, approval.ErrInvalidChoice):
		return withCause(BadRequest("choice", "choice must be allow_once, allow_session, allow_for, allow_always or deny"), err)
	case errors.As(err, &afe):
		return withCause(BadRequest(afe.Field, "%s", afe.Message), err)
	case errors.Is(err, approval.ErrInvalidTTL):
		return withCause(BadRequest("ttl_seconds", "ttl_seconds does not fit this answer"), err)
	case errors.Is(err, approval.ErrNoSession):
		return withCause(BadRequest("choice", "allow_session needs an ask made in a session (session_id); this one names none: answer allow_once, allow_for or deny"), err)
	case errors.Is(err, approval.ErrNoGranter):
		return withCause(BadRequest("choice", "this server keeps no grants; answer allow_once, allow_always or deny"), err)
	// Grants.
	case errors.Is(err, grant.ErrNotFound):
		return notFound("no live grant has this id")
	case errors.As(err, &gie):
		return withCause(BadRequest("", "%s", gie.Message), err)
	case errors.Is(err, grant.ErrInvalid):
		return withCause(BadRequest("", "the grant lacks what binds it"), err)
	case errors.Is(err, approval.ErrInvalidRequest):
		// A kind of approval.FieldError arriving without its field.
		return withCause(BadRequest("", "the ask is not one that may be prompted for"), err)
	case errors.Is(err, approval.ErrNoPersister):
		return withCause(BadRequest("choice", "always allow is not available on this server; answer allow_once or deny"), err)
	case errors.Is(err, approval.ErrClosed):
		return unavailable("the server is shutting down")
	case errors.Is(err, approval.ErrWebhookConfig):
		// A start-up error (flags); no request meets it.
		return &Error{Kind: KindInternal, Code: CodeInternal, Message: "the approval webhook is misconfigured", Cause: err}
	// Service errors.
	case errors.Is(err, ErrForbidden):
		// Require's error is an Error already; this is a sentinel some
		// other path wrapped.
		return withCause(Forbidden("", "this role may not do this"), err)
	case errors.Is(err, ErrLogOff):
		return unavailable("the decision log is turned off (--decision-log=false)")
	}
	if e := writeFailure(err); e != nil {
		return e
	}
	return &Error{Kind: KindInternal, Code: CodeInternal, Message: "internal error", Cause: err}
}

func withCause(e *Error, cause error) *Error {
	e.Cause = cause
	return e
}

// validation is a KindInvalid error whose details name each place.
func validation(ve *store.ValidationError, err error) *Error {
	e := &Error{Kind: KindInvalid, Code: CodeInvalid, Message: "the policy would not validate", Cause: err}
	for _, p := range ve.Problems {
		e.Details = append(e.Details, Detail{Field: p.Path, Message: p.Message})
	}
	if len(ve.Problems) == 1 {
		e.Message = ve.Problems[0].Path + ": " + ve.Problems[0].Message
	}
	return e
}

// writeFailure maps a config dir that cannot be written (full disk, file
// size limit, read-only file system, no permission) to a clear
// KindStorageFull or KindUnavailable:
// nothing was written and the policy in force is unchanged.
func writeFailure(err error) *Error {
	const unchanged = "; nothing was written and the policy in force is unchanged"
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG} {
		if errors.Is(err, errno) {
			return &Error{Kind: KindStorageFull, Code: CodeStorageFull,
				Message: "config.yaml could not be written: " + errno.Error() + " (the disk is full or a size limit is reached)" + unchanged, Cause: err}
		}
	}
	for _, errno := range []syscall.Errno{syscall.EROFS, syscall.EACCES, syscall.EPERM} {
		if errors.Is(err, errno) {
			return &Error{Kind: KindUnavailable, Code: CodeStorageReadOnly,
				Message: "config.yaml could not be written: " + errno.Error() + " (the config dir is read-only)" + unchanged, Cause: err}
		}
	}
	return nil
}

// refusal is the message a store.Refusal in err's chain gives a person,
// else fallback: the sentinel's meaning without its package prefix.
func refusal(err error, fallback string) string {
	if r, ok := errors.AsType[*store.Refusal](err); ok {
		return r.Message
	}
	return fallback
}

// policyKindWords says what kind of mistake err is, for a policy sentinel
// that arrives without the FieldError that names its field and words.
func policyKindWords(err error) string {
	switch {
	case errors.Is(err, policy.ErrNoTools):
		return "the rule names no tool"
	case errors.Is(err, policy.ErrBadTools):
		return "the rule's tools are unknown or of different kinds"
	case errors.Is(err, policy.ErrNetworkTools):
		return "a rule for network tools never matches"
	case errors.Is(err, policy.ErrBadPattern):
		return "a pattern does not compile"
	}
	return "a value is of the wrong type or not allowed"
}
