package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/toolgate/toolgate/engine"
)

// PolicySource is the engine in force and its validation problems.
type PolicySource interface {
	Engine() *engine.Engine
	Problems() []engine.Problem
}

// DecisionObserver is told of every decision (the decision log, metrics)
// and of where it came from.
type DecisionObserver interface {
	Observe(r *http.Request, req *engine.Request, d engine.Decision, from Caller)
}

// Deps are what the API needs from the rest of the server.
type Deps struct {
	Policy   PolicySource
	Tokens   TokenVerifier
	Sessions SessionAuthenticator // optional: browser sessions of the web package
	Observer DecisionObserver     // optional
	// Store edits the policy (the permissions routes, /rpc, commands).
	Store PolicyStore
	// TokenAdmin manages API tokens (/api/v1/tokens).
	TokenAdmin TokenManager
	// Decisions is the decision log (GET /api/v1/decisions, the preview);
	// nil when --decision-log=false.
	Decisions DecisionLog
	// PreviewPolicy and EngineOptions let the preview compile drafts the way
	// the server compiles the policy in force.
	PreviewPolicy PreviewPolicy
	EngineOptions engine.Options
	// Approvals holds pending asks (POST /api/v1/check, /api/v1/approvals).
	Approvals Approvals
	// Metrics serves /metrics; nil answers 503.
	Metrics http.Handler
	// OpenAPI is the text of openapi.yaml, served at /openapi.yaml.
	OpenAPI []byte
	Logger  *slog.Logger
}

// Server holds the API handlers.
type Server struct {
	deps Deps
	csrf *http.CrossOriginProtection
	// hookWait is how long a hook waits for a person (SetHookWait).
	hookWait time.Duration
}

// New builds the API server.
func New(deps Deps) *Server {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	return &Server{deps: deps, csrf: http.NewCrossOriginProtection()}
}

// Mount adds the API's routes to a router: /healthz (the only route without
// auth), /readyz, /openapi.yaml, /metrics, /rpc and everything under /api/v1.
func (s *Server) Mount(r chi.Router) {
	r.Get("/healthz", s.handleHealthz)
	r.Group(func(r chi.Router) {
		r.Use(s.authenticate)
		r.Get("/openapi.yaml", s.handleOpenAPI) // any role: agents read it too
		r.With(require(rightRead)).Get("/readyz", s.handleReadyz)
		r.With(require(rightRead)).Get("/metrics", s.handleMetrics)
		if s.deps.Store != nil {
			r.With(require(rightRead)).Post("/rpc", s.handleRPC)
		}
		r.Route("/api/v1", func(r chi.Router) {
			r.With(require(rightEvaluate)).Post("/evaluate", s.handleEvaluate)
			r.With(require(rightEvaluate)).Post("/evaluate/batch", s.handleEvaluateBatch)
			r.With(require(rightRead)).Get("/decisions", s.handleListDecisions)
			r.With(require(rightWrite)).Post("/permissions/preview", s.handlePreview)
			s.mountHooks(r)
			if s.deps.Store != nil && s.deps.TokenAdmin != nil {
				s.mountPermissions(r)
			}
			if s.deps.Approvals != nil {
				s.mountApprovals(r)
			}
		})
	})
}

// observe passes a decision and its caller (agent and session) to the
// observer, if any. Every route that decides calls it once per decision.
func (s *Server) observe(r *http.Request, req *engine.Request, d engine.Decision, from Caller) {
	if s.deps.Observer != nil {
		s.deps.Observer.Observe(r, req, d, from)
	}
}

// handleOpenAPI serves openapi.yaml.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(s.deps.OpenAPI)
}
