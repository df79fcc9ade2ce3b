package service

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/decisionlog"
	"github.com/toolgate/toolgate/store/history"
)

// PolicyReader is the policy in force: the engine, its problems, the
// section with its ETag and the built-in rules. *inforce.Holder is one, over
// any store.Backend (config.yaml, PostgreSQL).
type PolicyReader interface {
	Engine() *engine.Engine
	Problems() []policy.Problem
	Written() (policy.Written, string, error)
	BuiltinRules() ([]any, string)
	ToolOrder() []string
	EngineOptions() engine.Options
}

// PolicyDocs is the policy document store: the policy in force and its
// edits. Every edit locks, validates and writes atomically and returns the
// new ETag of the section; *inforce.Holder is one.
type PolicyDocs interface {
	PolicyReader
	ReplaceSection(section policy.Written) (string, error)
	SetSettings(patch policy.SettingsPatch) (string, error)
	SetToolLevel(tool, level string) (string, error)
	DeleteTool(tool string) (string, error)
	CreateRule(rule policy.Rule) (string, error)
	UpdateRule(id string, patch policy.RulePatch) (string, error)
	DeleteRule(id string) (string, error)
	AddApprovalOverride(o policy.Override) (string, error)
	DeleteApprovalOverride(id string) (string, error)
	SetExternalDirectory(key, level string) (string, error)
	DeleteExternalDirectory(key string) (string, error)
	SetOwnerScopes(scopes policy.OwnerScopes) (string, error)
	AddTrustedDirectory(path string, tools store.DirTools) (store.AddDirResult, error)
	// Update runs fn on the document under the store's lock and writes what
	// it staged (store.Tx); an error from fn writes nothing.
	Update(ctx context.Context, fn func(tx *store.Tx) error) (string, error)
	// CompiledEngine is the engine of the policy in force as compiled,
	// without the grants Engine shows through.
	CompiledEngine() *engine.Engine
}

// DocumentSource reads the stored policy document as text, for the export:
// a store.Backend (store.FileBackend, the PostgreSQL policy) is one.
type DocumentSource interface {
	Read(ctx context.Context) (store.Document, error)
}

// TokenStore holds API tokens; *auth.Tokens is one.
type TokenStore interface {
	Verify(token string) (auth.Principal, bool)
	Create(name, role string, channels, sessions []string) (auth.TokenInfo, string, error)
	List() []auth.TokenInfo
	Revoke(id string) error
}

// DecisionLog is the decision log: the recorder enqueues without waiting,
// the routes and pages read. *decisionlog.Log is one; NopDecisionLog stands
// in when the log is off.
type DecisionLog interface {
	Enqueue(e decisionlog.Entry) bool
	Query(ctx context.Context, q decisionlog.Query) (decisionlog.Page, error)
	RecentDecisions
}

// RecentDecisions gives the last logged calls with their full (redacted)
// arguments, which the impact preview replays.
type RecentDecisions interface {
	Recent(ctx context.Context, n int) ([]decisionlog.Entry, error)
}

// ApprovalHistory is the record of answered and pending approvals;
// *history.Store is one.
type ApprovalHistory interface {
	ListApprovals(ctx context.Context, q history.Query) (history.Page, error)
	GetApproval(ctx context.Context, id string) (approval.Approval, error)
}

// ApprovalManager holds the pending asks; *approval.Manager is one (alone,
// or mirroring a store shared by several replicas).
type ApprovalManager interface {
	CreateAs(ctx context.Context, req engine.Request, d engine.Decision, sessionID, agent string) (approval.Approval, bool, error)
	Get(id string) (approval.Approval, error)
	List(filter approval.Filter, status approval.Status) []approval.Approval
	Wait(ctx context.Context, id string, timeout time.Duration) (approval.Approval, error)
	DecideFor(ctx context.Context, id string, choice approval.Choice, ttl time.Duration, principal, comment string) (approval.Approval, error)
}
