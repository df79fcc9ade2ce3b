package api

import (
	"context"
	"github.com/toolgate/toolgate/store/auth"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/service"
)

// Deps are what the API needs from the rest of the server, given once to
// New. Optional parts have no-op stand-ins, so handlers never check for nil.
type Deps struct {
	// Policy is the policy in force and its edits; *inforce.Holder is one.
	Policy service.PolicyDocs
	// Edits is the policy service over Policy; nil makes one. Give the one
	// the pages and the approval manager use, so that all edits of the
	// process serialize their If-Match checks together.
	Edits *service.Policy
	// Documents reads the stored document for GET /permissions/export;
	// optional (nil: the config dir of Policy, see service.Policy.Export).
	Documents service.DocumentSource
	// Tokens verifies bearer tokens and manages them (/api/v1/tokens).
	Tokens service.TokenStore
	// Sessions authenticates browser sessions of the web package; optional.
	Sessions SessionAuthenticator
	// Observer is told of every decision; nil: service.NopObserver.
	Observer service.DecisionObserver
	// Decisions is the decision log (GET /api/v1/decisions, the preview);
	// nil (--decision-log=false): service.NopDecisionLog, whose reads 503.
	Decisions service.DecisionLog
	// Approvals holds pending asks (POST /api/v1/check, /api/v1/approvals);
	// nil: those routes are absent and hooks deny what would ask.
	Approvals service.ApprovalManager
	// Metrics serves /metrics; nil answers 503.
	Metrics http.Handler
	// HookWait is how long a hook waits for a person when the request names
	// no wait (--hook-wait), capped at MaxWaitSeconds; 0 or less: not at
	// all (an ask is then denied at once, its approval left pending). The
	// flag's default is DefaultHookWait.
	HookWait time.Duration
	// Throttle slows clients that fail to authenticate; nil throttles no
	// one. Share one with the pages.
	Throttle *auth.Throttle
	// PendingCaps bound the pending asks per token and session (zero: the
	// defaults).
	PendingCaps service.PendingCaps
	// HookAsk is what a hook does with an ask when the request names no ask
	// mode (--hook-ask); empty means HookAskWait.
	HookAsk HookAskMode
	// HookWorkspace, when set (--workspace given to the server), is the
	// workspace of every hook call whose request pins none; empty: the
	// first cwd of the call's session.
	HookWorkspace string
	// Ready, when set, says whether the storage answers (the shared
	// database): an error makes /readyz answer 503 with it as a problem.
	Ready func(ctx context.Context) error
	// Grants lists and revokes the live grants (docs/grants.md); nil keeps
	// none (the list is empty).
	Grants *service.Grants
	// OpenAPI is the text of openapi.yaml, served at /openapi.yaml.
	OpenAPI []byte
	Logger  *slog.Logger
}

// Server holds the API handlers.
type Server struct {
	deps      Deps
	policy    *service.Policy
	approvals *service.Approvals
	throttle  *auth.Throttle
	tokens    *service.Tokens
	csrf      *http.CrossOriginProtection
	// rpcMethods are the JSON-RPC methods (rpc_methods.go).
	rpcMethods map[string]rpcMethod
	// sessions pins each hook session's workspace (hook_sessions.go).
	sessions *sessionWorkspaces
}

// New builds the API server from all its parts.
func New(deps Deps) *Server {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Observer == nil {
		deps.Observer = service.NopObserver{}
	}
	if deps.Decisions == nil {
		deps.Decisions = service.NopDecisionLog{}
	}
	deps.HookWait = min(max(deps.HookWait, 0), MaxWaitSeconds*time.Second)
	if deps.HookAsk == "" {
		deps.HookAsk = HookAskWait
	}
	if deps.Edits == nil {
		deps.Edits = service.NewPolicy(deps.Policy)
	}
	return &Server{
		deps:       deps,
		policy:     deps.Edits,
		approvals:  newApprovals(deps),
		throttle:   deps.Throttle,
		tokens:     service.NewTokens(deps.Tokens),
		csrf:       http.NewCrossOriginProtection(),
		rpcMethods: rpcMethodTable(),
		sessions:   newSessionWorkspaces(maxSessions),
	}
}

// Mount adds the API's routes to a router: /healthz (the only route without
// auth), /readyz, /openapi.yaml, /metrics, /rpc and everything under /api/v1.
func (s *Server) Mount(r chi.Router) {
	r.Get("/healthz", s.handleHealthz)
	r.Group(func(r chi.Router) {
		r.Use(s.authenticate)
		r.Get("/openapi.yaml", s.handleOpenAPI) // any role: agents read it too
		r.With(require(service.RightRead)).Get("/readyz", s.handleReadyz)
		r.With(require(service.RightRead)).Get("/metrics", s.handleMetrics)
		r.With(require(service.RightRead)).Post("/rpc", s.handleRPC)
		r.Route("/api/v1", func(r chi.Router) {
			r.NotFound(NotFound)
			r.MethodNotAllowed(MethodNotAllowed)
			r.With(require(service.RightEvaluate)).Post("/evaluate", s.handleEvaluate)
			r.With(require(service.RightEvaluate)).Post("/evaluate/batch", s.handleEvaluateBatch)
			r.With(require(service.RightRead)).Get("/decisions", s.handleListDecisions)
			r.With(require(service.RightRead)).Get("/shadow", s.handleListShadow)
			r.With(require(service.RightWrite)).Post("/permissions/preview", s.handlePreview)
			s.mountHooks(r)
			s.mountPermissions(r)
			if s.approvals.Available() {
				s.mountApprovals(r)
				s.mountGrants(r)
			}
		})
	})
}

// observe passes a decision and where it came from to the observer. Every
// route that decides calls it once per decision, with the source of its own
// route and the time it started.
func (s *Server) observe(source string, start time.Time, req *engine.Request, d engine.Decision, from Caller) {
	s.deps.Observer.Observe(service.Observation{Source: source, Agent: from.Agent, Session: from.Session, Start: start}, req, d)
}

// handleOpenAPI serves openapi.yaml.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(s.deps.OpenAPI)
}

// newApprovals is the approvals service with the configured caps.
func newApprovals(deps Deps) *service.Approvals {
	a := service.NewApprovals(deps.Approvals)
	a.SetPendingCaps(deps.PendingCaps)
	return a
}
