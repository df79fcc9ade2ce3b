package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	toolgate "github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/decisionlog"
	"github.com/toolgate/toolgate/store/history"
	"github.com/toolgate/toolgate/web"
)

// app is the wired server: its handler and what to close.
type app struct {
	handler   http.Handler
	tokenFile string
	closers   []func() error
	stoppers  []func()
}

func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		_ = a.closers[i]()
	}
}

// shutdown runs before the HTTP server stops (cancels pending approvals).
func (a *app) shutdown() {
	for _, s := range a.stoppers {
		s()
	}
}

// wire builds the server from its parts.
func wire(c config, log *slog.Logger) (*app, error) {
	dir, err := store.ResolveConfigDir(c.configDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("config dir: %w", err)
	}
	st, err := store.Open(dir, store.Options{Workspace: c.workspace, Logger: log})
	if err != nil {
		return nil, err
	}
	a := &app{closers: []func() error{st.Close}}
	tokens, created, err := auth.OpenTokens(dir)
	if err != nil {
		a.close()
		return nil, err
	}
	a.tokenFile = filepath.Join(dir, auth.AdminTokenFile)
	if created {
		log.Info("created the admin token", "file", a.tokenFile)
	}
	mgr, err := wireApprovals(c, dir, st, a, log)
	if err != nil {
		a.close()
		return nil, err
	}
	ui := web.New(web.Deps{Policy: st, Tokens: tokens, Logger: log, Approvals: mgr,
		EngineOptions: st.EngineOptions()})
	ui.Sessions().EndWithToken(tokens.Active)
	hub := wireHub(mgr, ui.Sessions().HubAuthWithTokens(tokens), st, a, log)
	tokens.OnRevoke(hub.Recheck)
	ui.Sessions().OnSignOut(hub.Recheck)
	dl, err := wireDecisionLog(c, dir, st, a, log)
	if err != nil {
		a.close()
		return nil, err
	}
	dl.metrics.SetPendingApprovals(func() float64 { return float64(mgr.Stats().Pending) })
	dl.metrics.SetWebsocketClients(func() float64 { return float64(hub.Clients()) })
	go observeApprovalLatency(mgr, dl.metrics)
	if err := wireWebhooks(c, os.Getenv, mgr, dl.metrics, a, log); err != nil {
		a.close()
		return nil, err
	}
	apiServer := api.New(api.Deps{Policy: st, Tokens: tokens, Approvals: mgr,
		Observer: dl.recorder, Decisions: dl.decisionLog(), Metrics: dl.metrics.Handler(), HookWait: c.hookWait,
		OpenAPI: toolgate.OpenAPI, Logger: log, Sessions: ui.Sessions()})
	r := chi.NewRouter()
	r.Use(middleware.RequestID, api.RequestLog(log), middleware.Recoverer)
	apiServer.Mount(r)
	r.Get("/ws", hub.ServeHTTP)
	ui.Mount(r)
	dl.mountPage(ui, r)
	a.handler = r
	return a, nil
}

// approvalDBFile is the SQLite file of the approval history.
const approvalDBFile = "approvals.db"

// wireApprovals opens the approval history and the manager of pending asks;
// asks left pending by a previous run are marked cancelled.
func wireApprovals(c config, dir string, st *store.Store, a *app, log *slog.Logger) (*approval.Manager, error) {
	db, err := history.Open(filepath.Join(dir, approvalDBFile))
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, db.Close)
	mgr := approval.New(approval.Options{Timeout: c.approvalTimeout, Persister: st, History: db, Logger: log})
	if n, err := mgr.RecoverHistory(context.Background()); err != nil {
		log.Warn("approval history: recovery failed", "err", err)
	} else if n > 0 {
		log.Info("approval history: cancelled asks left pending by the previous run", "count", n)
	}
	a.stoppers = append(a.stoppers, mgr.Shutdown)
	return mgr, nil
}

// wireHub starts the websocket hub and tells it of policy changes.
func wireHub(mgr *approval.Manager, auth web.HubAuthenticator, st *store.Store, a *app, log *slog.Logger) *web.Hub {
	hub := web.NewHub(mgr, auth, web.HubOptions{Logger: log})
	ctx, cancel := context.WithCancel(context.Background())
	go hub.Run(ctx)
	a.stoppers = append(a.stoppers, cancel)
	st.OnChange(func() {
		_, etag, _ := st.Section()
		hub.PolicyChanged(etag)
	})
	return hub
}

// observeApprovalLatency feeds the time from ask to answer into the metrics.
// A subscriber that lags is dropped by the manager, so it subscribes again
// until the manager shuts down.
func observeApprovalLatency(mgr *approval.Manager, m *api.Metrics) {
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
// feeds them (issue 8).
type decisionParts struct {
	log      *decisionlog.Log // nil when --decision-log=false
	metrics  *api.Metrics
	recorder *api.DecisionRecorder
	policy   *store.Store
}

// decisionDBFile is the SQLite file of the decision log in the config dir.
const decisionDBFile = "decisions.db"

// wireDecisionLog opens the decision log (unless turned off) and the metrics.
func wireDecisionLog(c config, dir string, st *store.Store, a *app, log *slog.Logger) (*decisionParts, error) {
	p := &decisionParts{policy: st}
	mo := api.MetricsOptions{ConfigProblems: func() float64 { return float64(len(st.Problems())) }}
	if c.decisionLog {
		var err error
		p.log, err = decisionlog.Open(filepath.Join(dir, decisionDBFile), decisionlog.Options{Retention: c.logRetention, MaxRows: c.logMaxRows, Logger: log})
		if err != nil {
			return nil, err
		}
		a.closers = append(a.closers, p.log.Close)
		mo.LogDropped = func() float64 { return float64(p.log.Dropped()) }
		mo.LogQueued = func() float64 { return float64(p.log.QueueLen()) }
	}
	p.metrics = api.NewMetrics(mo)
	st.OnChange(p.metrics.ConfigReloaded)
	var logIface api.DecisionLog
	if p.log != nil {
		logIface = p.log
	}
	p.recorder = api.NewDecisionRecorder(logIface, p.metrics, c.logFullArgs)
	return p, nil
}

// decisionLog is the decision log for api.Deps: nil (a no-op log there)
// when it is off.
func (p *decisionParts) decisionLog() api.DecisionLog {
	if p.log == nil {
		return nil
	}
	return p.log
}

// mountPage adds the decision log page of the admin UI.
func (p *decisionParts) mountPage(ui *web.UI, r chi.Router) {
	var log web.DecisionReader
	if p.log != nil {
		log = p.log
	}
	ui.MountDecisions(r, log)
}
