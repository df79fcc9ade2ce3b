package service_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/history"
)

// sentinels are every exported Err* variable of the packages whose errors
// reach a handler, by "dir.Name". TestEverySentinelClassified fails when a
// package gains one that is not listed here (and so maybe not in Classify).
var sentinels = map[string]error{
	"store.ErrUnavailable":        store.ErrUnavailable,
	"store.ErrNotFound":           store.ErrNotFound,
	"store.ErrExists":             store.ErrExists,
	"store.ErrPreconditionFailed": store.ErrPreconditionFailed,
	"store.ErrNotAsk":             store.ErrNotAsk,
	"store.ErrNoPattern":          store.ErrNoPattern,
	"store.ErrBrokenConfig":       store.ErrBrokenConfig,
	"store.ErrNotSection":         store.ErrNotSection,
	"store.ErrNoDocument":         store.ErrNoDocument,
	"store/auth.ErrNoSession":     auth.ErrNoSession,
	"store/auth.ErrBadRole":       auth.ErrBadRole,
	"store/auth.ErrNotFound":      auth.ErrNotFound,
	"store/history.ErrBadCursor":  history.ErrBadCursor,
	"approval.ErrNotFound":        approval.ErrNotFound,
	"approval.ErrAlreadyDecided":  approval.ErrAlreadyDecided,
	"approval.ErrInvalidChoice":   approval.ErrInvalidChoice,
	"approval.ErrInvalidRequest":  approval.ErrInvalidRequest,
	"approval.ErrNoPersister":     approval.ErrNoPersister,
	"approval.ErrClosed":          approval.ErrClosed,
	"approval.ErrWebhookConfig":   approval.ErrWebhookConfig,
	"approval.ErrInvalidTTL":      approval.ErrInvalidTTL,
	"approval.ErrNoSession":       approval.ErrNoSession,
	"approval.ErrNoGranter":       approval.ErrNoGranter,
	"grant.ErrNotFound":           grant.ErrNotFound,
	"grant.ErrInvalid":            grant.ErrInvalid,
	"policy.ErrInvalid":           policy.ErrInvalid,
	"policy.ErrNoTools":           policy.ErrNoTools,
	"policy.ErrBadTools":          policy.ErrBadTools,
	"policy.ErrNetworkTools":      policy.ErrNetworkTools,
	"policy.ErrBadPattern":        policy.ErrBadPattern,
	"policy.ErrNoTool":            policy.ErrNoTool,
	"policy.ErrNothingToRemember": policy.ErrNothingToRemember,
	"policy.ErrNotObject":         policy.ErrNotObject,
	"service.ErrForbidden":        service.ErrForbidden,
	"service.ErrLogOff":           service.ErrLogOff,
}

// startupOnly are sentinels no request meets; Classify still names them,
// as internal errors.
var startupOnly = map[string]bool{"approval.ErrWebhookConfig": true}

// TestEverySentinelClassified: every exported Err* of the packages above
// is listed, and Classify gives each (wrapped, as callers return them) a
// kind other than KindInternal, so no store or service error answers "internal
// error" by accident.
func TestEverySentinelClassified(t *testing.T) {
	for _, dir := range []string{"store", "store/auth", "store/history", "approval", "policy", "service", "grant"} {
		for _, name := range exportedErrs(t, filepath.Join("..", dir)) {
			if _, ok := sentinels[dir+"."+name]; !ok {
				t.Errorf("%s.%s is not in this test's table: add it here and a case for it in service.Classify", dir, name)
			}
		}
	}
	for name, err := range sentinels {
		e := service.Classify(fmt.Errorf("doing something: %w", err))
		if startupOnly[name] {
			continue
		}
		if e.Kind == service.KindInternal || e.Code == service.CodeInternal {
			t.Errorf("%s: got kind %d %s, want a fitting kind", name, e.Kind, e.Code)
		}
		if !errors.Is(e, err) {
			t.Errorf("%s: the classified error does not wrap its cause", name)
		}
	}
}

// exportedErrs parses a package's non-test files for exported variables
// named Err*.
func exportedErrs(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if strings.HasPrefix(n.Name, "Err") && n.IsExported() {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	return names
}

// TestClassify: the kinds, codes and fields the contract's tests rely on.
func TestClassify(t *testing.T) {
	cases := []struct {
		note  string
		err   error
		kind  service.Kind
		code  string
		field string
	}{
		{note: "stale ETag", err: store.ErrPreconditionFailed, kind: service.KindStale, code: "precondition_failed"},
		{note: "database away", err: fmt.Errorf("pg: write: %w", store.ErrUnavailable), kind: service.KindUnavailable, code: "unavailable"},
		{note: "database away wins over what it wraps", err: fmt.Errorf("%w: %w", store.ErrUnavailable, store.ErrNotFound), kind: service.KindUnavailable, code: "unavailable"},
		{note: "always allow with nothing to remember", err: store.ErrNoPattern, kind: service.KindInvalid, code: "bad_request", field: "choice"},
		{note: "always allow when the policy no longer asks", err: store.ErrNotAsk, kind: service.KindConflict, code: "conflict"},
		{note: "validation names the place", err: &store.ValidationError{Problems: []policy.Problem{{Path: "permissions.rules[0].pattern", Message: "bad"}}},
			kind: service.KindInvalid, code: "invalid", field: "permissions.rules[0].pattern"},
		{note: "a request field", err: &policy.FieldError{Field: "rules[2].action", Message: "bad", Err: policy.ErrInvalid}, kind: service.KindInvalid, code: "bad_request", field: "rules[2].action"},
		{note: "an answer's field, wrapped", err: fmt.Errorf("decide: %w", &approval.FieldError{Err: approval.ErrInvalidTTL, Field: "ttl_seconds", Message: "only allow_for takes ttl_seconds"}),
			kind: service.KindInvalid, code: "bad_request", field: "ttl_seconds"},
		{note: "a grant that lacks a session", err: fmt.Errorf("add: %w", (grant.Grant{ID: "g", ToolName: "bash", Scope: grant.ScopeSession, Pattern: "make", MatchType: "prefix"}).Check()),
			kind: service.KindInvalid, code: "bad_request"},
		{note: "role", err: service.Require(auth.Principal{Role: auth.RoleApprover}, service.RightWrite), kind: service.KindForbidden, code: "forbidden"},
		{note: "full disk", err: fmt.Errorf("write: %w", syscall.ENOSPC), kind: service.KindStorageFull, code: "storage_full"},
		{note: "read-only dir", err: fmt.Errorf("write: %w", syscall.EROFS), kind: service.KindUnavailable, code: "storage_read_only"},
		{note: "body too large", err: &http.MaxBytesError{Limit: 10}, kind: service.KindTooLarge, code: "too_large"},
		{note: "anything else", err: errors.New("boom"), kind: service.KindInternal, code: "internal"},
	}
	for _, c := range cases {
		e := service.Classify(c.err)
		if e.Kind != c.kind || e.Code != c.code || e.Field() != c.field {
			t.Errorf("%s: got kind %d %s field %q, want kind %d %s field %q", c.note, e.Kind, e.Code, e.Field(), c.kind, c.code, c.field)
		}
	}
	if e := service.Classify((grant.Grant{ID: "g", ToolName: "bash"}).Check()); e.Message != "scope must be session or timed" {
		t.Errorf("grant message: got %q", e.Message)
	}
	if e := service.Classify(service.Require(auth.Principal{Role: auth.RoleAgent}, service.RightWrite)); e.Message != "role agent may not write" {
		t.Errorf("forbidden message: got %q", e.Message)
	}
}

// TestRefusalMessages: what a person reads of a refused edit is the store's
// own words without any package prefix, however the refusal was wrapped;
// a bare sentinel reads as its meaning.
func TestRefusalMessages(t *testing.T) {
	cases := []struct {
		note string
		err  error
		kind service.Kind
		want string
		// field is the field the one detail names, when there is one.
		field string
	}{
		{note: "a missing rule", err: store.Refuse(store.ErrNotFound, "rules id %q: not found", "x"), kind: service.KindNotFound, want: `rules id "x": not found`},
		{note: "wrapped on its way out", err: fmt.Errorf("edit: %w", store.Refuse(store.ErrExists, "rules id %q: already exists", "x")), kind: service.KindConflict, want: `rules id "x": already exists`},
		{note: "a config that does not parse", err: store.Refuse(store.ErrBrokenConfig, "config.yaml does not parse: %v", errors.New("line 3: bad")), kind: service.KindConflict, want: "config.yaml does not parse: line 3: bad"},
		{note: "a bare sentinel", err: store.ErrNotFound, kind: service.KindNotFound, want: "not found"},
		{note: "a token", err: fmt.Errorf("revoke: %w", auth.ErrNotFound), kind: service.KindNotFound, want: "token not found"},
		{note: "an ask the shared store refused", err: fmt.Errorf("pg: insert ask: %w", approval.InvalidRequest("tool_args", "the ask does not encode as JSON")),
			kind: service.KindInvalid, want: "the ask does not encode as JSON", field: "tool_args"},
		{note: "an approval sentinel without its field", err: fmt.Errorf("answer: %w", approval.ErrInvalidRequest), kind: service.KindInvalid, want: "the ask is not one that may be prompted for"},
		{note: "a policy sentinel without its field", err: fmt.Errorf("edit: %w", policy.ErrNoTools), kind: service.KindInvalid, want: "the rule names no tool"},
	}
	for _, c := range cases {
		e := service.Classify(c.err)
		if e.Kind != c.kind || e.Message != c.want {
			t.Errorf("%s: got kind %d %q, want kind %d %q", c.note, e.Kind, e.Message, c.kind, c.want)
		}
		for _, pkg := range []string{"store:", "auth:", "approval:", "policy:", "pg:"} {
			if strings.Contains(e.Message, pkg) {
				t.Errorf("%s: %q names a package", c.note, e.Message)
			}
		}
		if c.field != "" && (len(e.Details) != 1 || e.Details[0].Field != c.field) {
			t.Errorf("%s: details %+v, want one naming %s", c.note, e.Details, c.field)
		}
	}
	if !errors.Is(store.Refuse(store.ErrNotFound, "tool %q: not found", "bash"), store.ErrNotFound) {
		t.Error("a Refusal is not its kind to errors.Is")
	}
}
