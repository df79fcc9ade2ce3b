// Package web serves toolgate's admin pages: server-rendered templ pages
// for the policy (tools, rules, external directories, approval overrides),
// a playground that explains decisions, and the approvals inbox. Every
// change goes through the same services as the REST API (service.Policy
// with the form's ETag as If-Match, service.Approvals, service.Tokens), and
// every role check asks the same table (service.Allowed).
package web

import (
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"os"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
)

//go:embed static
var staticFiles embed.FS

// PolicyEditor is the policy in force and its edit operations;
// *inforce.Holder satisfies it. The pages edit through service.Policy over it.
type PolicyEditor = service.PolicyDocs

// TokenVerifier checks the token given at login.
type TokenVerifier interface {
	Verify(token string) (auth.Principal, bool)
}

// Deps are what the pages need from the rest of the server.
type Deps struct {
	Policy PolicyEditor
	// Edits is the policy service the pages write through; nil makes one
	// over Policy. Give the API's (api.Server.Policy) so that both serialize
	// their If-Match checks together.
	Edits  *service.Policy
	Tokens TokenVerifier
	// Approvals is optional: without it the inbox says approvals are not
	// available.
	Approvals service.ApprovalManager
	// Sessions is optional: New makes one when nil.
	Sessions *Sessions
	// EngineOptions compile the one-rule policies of "test this rule".
	EngineOptions engine.Options
	Logger        *slog.Logger
	// Throttle slows clients whose sign-ins fail; nil throttles no one.
	// Share the API's.
	Throttle *auth.Throttle
	// Grants are this replica's live grants; nil: the server keeps none
	// (the Grants page says so).
	Grants *grant.Book
}

// UI is the admin pages.
type UI struct {
	deps   Deps
	pol    *service.Policy
	tokens *service.Tokens
	// approvals answers asks; not Available without Deps.Approvals.
	approvals *service.Approvals
	sessions  *Sessions
	csrf      *http.CrossOriginProtection
	// recent feeds the rules page's impact preview; nil without a decision log.
	recent RecentDecisions
	// decisions is the decision log, for the MCP tools it has seen
	// (mcp_tools.go); nil without one.
	decisions DecisionReader
}

// New builds the admin pages.
func New(deps Deps) *UI {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Sessions == nil {
		deps.Sessions = NewSessions(0)
	}
	if deps.EngineOptions.HomeDir == "" {
		deps.EngineOptions.HomeDir, _ = os.UserHomeDir()
	}
	if deps.Edits == nil {
		deps.Edits = service.NewPolicy(deps.Policy)
	}
	tm, _ := deps.Tokens.(service.TokenStore)
	return &UI{deps: deps, pol: deps.Edits, tokens: service.NewTokens(tm), approvals: service.NewApprovals(deps.Approvals), sessions: deps.Sessions,
		csrf: http.NewCrossOriginProtection()}
}

// Sessions returns the browser sessions, which also authenticate the API
// (api.SessionAuthenticator) and the websocket.
func (u *UI) Sessions() *Sessions { return u.sessions }

// Mount adds the pages to a router: /, /login, /logout, /settings,
// /tools, /rules..., /directories..., /overrides..., /playground,
// /approvals..., /grants... and /static/*.
func (u *UI) Mount(r chi.Router) {
	r.NotFound(u.NotFound)
	r.Group(func(r chi.Router) {
		r.Use(securityHeaders, u.crossOrigin, withLang)
		r.Get("/lang", setLang)
		static, _ := fs.Sub(staticFiles, "static")
		r.Handle("/static/*", http.StripPrefix("/static/", http.FileServerFS(static)))
		r.Get("/login", u.loginPage)
		r.Post("/login", u.login)
		r.Group(func(r chi.Router) {
			r.Use(u.requireSession)
			r.Post("/logout", u.logout)
			r.Get("/", u.overview)
			r.Get("/tools", u.toolsPage)
			r.Get("/rules", u.rulesPage)
			r.Get("/rules/edit", u.ruleEditPage)
			r.Get("/shadow", u.shadowPage)
			r.Get("/directories", u.directoriesPage)
			r.Get("/owners", u.ownersPage)
			r.Get("/overrides", u.overridesPage)
			r.Get("/playground", u.playgroundPage)
			r.Get("/approvals", u.approvalsPage)
			r.Get("/approvals/item", u.approvalItem)
			r.Post("/approvals/decide", u.decideApproval)
			r.Get("/grants", u.grantsPage)
			r.Post("/grants/revoke", u.revokeGrantForm)
			r.Group(func(r chi.Router) {
				r.Use(requireRight(service.RightWrite))
				r.Post("/settings", u.saveSettings)
				r.Post("/tools", u.saveTool)
				r.Post("/rules", u.createRule)
				r.Post("/rules/update", u.updateRule)
				r.Post("/rules/delete", u.deleteRule)
				r.Post("/rules/test", u.testRule)
				r.Post("/rules/preview", u.previewRule)
				r.Post("/rules/check", u.checkPattern)
				r.Post("/shadow/enforce", u.enforceShadow)
				r.Post("/directories", u.saveDirectory)
				r.Post("/directories/delete", u.deleteDirectory)
				r.Post("/directories/trust", u.trustDirectory)
				r.Post("/overrides/delete", u.deleteOverride)
				r.Post("/grants/override/delete", u.deleteAlwaysOverride)
				r.Post("/playground", u.playground)
				r.Get("/tokens", u.tokensPage)
				r.Post("/tokens", u.createToken)
				r.Post("/tokens/revoke", u.revokeToken)
			})
		})
	})
}

// securityHeaders sets the headers every page carries: no framing, no
// referrer, and only this origin's scripts, styles and connections.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

// crossOrigin refuses cross-site form posts (Go's CrossOriginProtection,
// by Sec-Fetch-Site or Origin); the session's CSRF token is checked too.
func (u *UI) crossOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := u.csrf.Check(r); err != nil {
			http.Error(w, "cross-origin request refused", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// render writes a component with a status.
func render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := c.Render(r.Context(), w); err != nil {
		slog.Default().Warn("render page", "path", r.URL.Path, "err", err)
	}
}
