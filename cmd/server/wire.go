package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	toolgate "github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/observe"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/web"
)

// startTimeout bounds the start's storage work (connecting to the
// database, migrations, the import).
const startTimeout = 60 * time.Second

// app is the wired server: its handler, what to stop before the HTTP
// server stops, and the one stack of what to close.
type app struct {
	handler   http.Handler
	tokenFile string
	log       *slog.Logger
	// stoppers run first, in order (the approval manager, the hub, the
	// webhook notifier), before the HTTP server stops.
	stoppers []func()
	// closers run last, in the reverse order of opening.
	closers   []namedCloser
	stopOnce  sync.Once
	closeOnce sync.Once
}

type namedCloser struct {
	name string
	fn   func() error
}

// onClose pushes fn on the closer stack: every part that holds something
// (a file, a goroutine, a connection) is pushed as soon as it is open, so
// that a start that fails later releases it.
func (a *app) onClose(name string, fn func() error) {
	a.closers = append(a.closers, namedCloser{name, fn})
}

// onStop adds fn to the stoppers.
func (a *app) onStop(fn func()) { a.stoppers = append(a.stoppers, fn) }

// shutdown runs the stoppers once (cancels pending approvals, closes
// websockets).
func (a *app) shutdown() {
	a.stopOnce.Do(func() {
		for _, s := range a.stoppers {
			s()
		}
	})
}

// close runs the stoppers if they have not run, then the closers in the
// reverse order of opening, once. It returns their errors, joined.
func (a *app) close() error {
	a.shutdown()
	var errs []error
	a.closeOnce.Do(func() {
		for i := len(a.closers) - 1; i >= 0; i-- {
			c := a.closers[i]
			if err := c.fn(); err != nil {
				errs = append(errs, fmt.Errorf("close %s: %w", c.name, err))
			}
		}
	})
	err := errors.Join(errs...)
	if err != nil && a.log != nil {
		a.log.Warn("closing", "err", err)
	}
	return err
}

// wire builds the server from its parts, each made once. When a step
// fails, everything the earlier steps opened is closed before it returns.
func wire(c config, log *slog.Logger) (_ *app, err error) {
	a := &app{log: log}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	dir, err := store.ResolveConfigDir(c.configDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("config dir: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	s, err := openStorage(ctx, c, dir, a, log)
	if err != nil {
		return nil, err
	}
	wireMemory(c, s.policy, a, log)
	a.tokenFile = filepath.Join(dir, auth.AdminTokenFile)
	// One policy service for REST, the pages and always-allow, so that
	// their If-Match checks serialize together.
	edits := service.NewPolicy(s.policy)
	book := wireGrants(s, a, log)
	mgr := wireApprovals(c, s, edits, service.NewGranter(book, s.policy), a, log)
	sessions := web.NewSessionsOn(s.sessions, 0, log)
	throttle := auth.NewThrottle(c.authFailures, auth.DefaultThrottleWindow)
	ui := web.New(web.Deps{Policy: s.policy, Edits: edits, Tokens: s.tokens, Logger: log, Approvals: mgr, Throttle: throttle,
		Sessions: sessions, EngineOptions: s.policy.EngineOptions(), Grants: book})
	sessions.EndWithToken(s.tokens.Active)
	hub := wireHub(mgr, sessions.HubAuthWithTokens(s.tokens), s.policy, a, log)
	s.tokens.OnRevoke(hub.Recheck)
	sessions.OnSignOut(hub.Recheck)
	dl := wireDecisionLog(c, s)
	dl.metrics.SetPendingApprovals(func() float64 { return float64(mgr.Stats().Pending) })
	dl.metrics.SetWebsocketClients(func() float64 { return float64(hub.Clients()) })
	go observeApprovalLatency(mgr, dl.metrics)
	if err := wireWebhooks(c, os.Getenv, mgr, dl.metrics, a, log); err != nil {
		return nil, err
	}
	apiServer := api.New(api.Deps{Policy: s.policy, Edits: edits, Documents: s.policy.Backend(), Tokens: s.tokens, Approvals: mgr, Throttle: throttle,
		Observer: dl.recorder, Decisions: dl.decisionLog(), Metrics: dl.metrics.Handler(), HookWait: c.hookWait,
		HookAsk: api.HookAskMode(c.hookAsk), HookWorkspace: c.hookWorkspace(),
		PendingCaps: service.PendingCaps{PerToken: c.pendingPerToken, PerSession: c.pendingPerSession},
		OpenAPI:     toolgate.OpenAPI, Logger: log, Sessions: sessions, Ready: s.ready, Grants: service.NewGrants(book)})
	a.handler = routes(apiServer, hub, ui, dl, log)
	return a, nil
}

// routes mounts the API, the websocket and the pages on one router.
func routes(apiServer *api.Server, hub *web.Hub, ui *web.UI, dl *decisionParts, log *slog.Logger) http.Handler {
	r := chi.NewRouter()
	r.Use(api.RequestLog(log), middleware.Recoverer)
	apiServer.Mount(r)
	r.Get("/ws", hub.ServeHTTP)
	ui.Mount(r)
	dl.mountPage(ui, r)
	// API clients read JSON, so a path or method no API route has answers
	// in the API's error shape; every other path gets the pages' answer.
	r.NotFound(api.Fallback(api.NotFound, ui.NotFound))
	r.MethodNotAllowed(api.Fallback(api.MethodNotAllowed, pageMethodNotAllowed))
	return r
}

// wireApprovals makes the manager of pending asks (shared across replicas
// with a database); asks a previous run of a single server left pending
// are marked cancelled.
func wireApprovals(c config, s *storage, edits *service.Policy, granter approval.Granter, a *app, log *slog.Logger) *approval.Manager {
	mgr := approval.New(approval.Options{Timeout: c.approvalTimeout, Persister: edits, Granter: granter, History: s.history,
		Shared: s.shared, Logger: log})
	a.onStop(mgr.Shutdown)
	if n, err := mgr.RecoverHistory(context.Background()); err != nil {
		log.Warn("approval history: recovery failed", "err", err)
	} else if n > 0 {
		log.Info("approval history: cancelled asks left pending by the previous run", "count", n)
	}
	return mgr
}

// wireGrants loads the live grants and keeps them in step with the store
// until the server stops; every decision made through the policy store
// consults them from then on (docs/grants.md). A first load that fails
// starts with none: a grant only ever loosens.
func wireGrants(s *storage, a *app, log *slog.Logger) *grant.Book {
	book := grant.NewBook(s.grants, grant.Options{Logger: log})
	ctx, cancel := context.WithCancel(context.Background())
	a.onStop(cancel)
	if err := book.Start(ctx); err != nil {
		log.Warn("grants: first load failed; starting with none", "err", err)
	}
	s.policy.SetEngineView(book.Engine)
	return book
}

// wireHub starts the websocket hub and tells it of policy changes.
func wireHub(mgr *approval.Manager, auth web.HubAuthenticator, st *inforce.Holder, a *app, log *slog.Logger) *web.Hub {
	hub := web.NewHub(mgr, auth, web.HubOptions{Logger: log})
	ctx, cancel := context.WithCancel(context.Background())
	go hub.Run(ctx)
	a.onStop(cancel)
	st.OnChange(func() {
		_, etag, _ := st.Section()
		hub.PolicyChanged(etag)
	})
	return hub
}

// observeApprovalLatency feeds the time from ask to answer into the metrics.
// A subscriber that lags is dropped by the manager, so it subscribes again
// until the manager shuts down.
func observeApprovalLatency(mgr *approval.Manager, m *observe.Metrics) {
	for {
		events, cancel := mgr.Subscribe()
		for ev := range events {
			if ev.Type == approval.EventResolved && ev.Approval.DecidedAt != nil {
				m.ObserveApprovalLatency(ev.Approval.DecidedAt.Sub(ev.Approval.CreatedAt))
			}
		}
		cancel()
		select {
		case <-mgr.Done():
			return
		default:
		}
	}
}

// decisionParts are the decision log, the metrics and the recorder that
// feeds them.
type decisionParts struct {
	log      decisionStore // nil when --decision-log=false
	metrics  *observe.Metrics
	recorder *observe.Recorder
}

// wireDecisionLog makes the metrics and the recorder over the decision log
// the storage opened (none with --decision-log=false).
func wireDecisionLog(c config, s *storage) *decisionParts {
	p := &decisionParts{log: s.decisions}
	st := s.policy
	mo := observe.MetricsOptions{ConfigProblems: func() float64 { return float64(len(st.Problems())) }}
	if p.log != nil {
		mo.LogDropped = func() float64 { return float64(p.log.Dropped()) }
		mo.LogQueued = func() float64 { return float64(p.log.QueueLen()) }
	}
	p.metrics = observe.NewMetrics(mo)
	st.OnChange(p.metrics.ConfigReloaded)
	p.recorder = observe.NewRecorder(p.decisionLog(), p.metrics, c.logFullArgs).WithPolicy(st.Engine)
	return p
}

// decisionLog is the decision log for api.Deps and the recorder: the no-op
// log (reads answer 503) when it is off.
func (p *decisionParts) decisionLog() service.DecisionLog {
	if p.log == nil {
		return service.NopDecisionLog{}
	}
	return p.log
}

// mountPage adds the decision log page of the admin UI (nil: the page says
// the log is off).
func (p *decisionParts) mountPage(ui *web.UI, r chi.Router) {
	var log web.DecisionReader
	if p.log != nil {
		log = p.log
	}
	ui.MountDecisions(r, log)
}

// pageMethodNotAllowed answers a page path that exists but not for this
// method, as a plain 405.
func pageMethodNotAllowed(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
}

// hookWorkspace is the workspace the hooks pin: --workspace when it was
// given, else none (each session's first cwd).
func (c config) hookWorkspace() string {
	if c.workspaceSet {
		return c.workspace
	}
	return ""
}
