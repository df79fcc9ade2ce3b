package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	toolgate "github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/store"
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
	tokens, created, err := store.OpenTokens(dir)
	if err != nil {
		a.close()
		return nil, err
	}
	a.tokenFile = filepath.Join(dir, store.AdminTokenFile)
	if created {
		log.Info("created the admin token", "file", a.tokenFile)
	}
	ui := web.New(web.Deps{Policy: st, Tokens: tokens, Logger: log,
		EngineOptions: engine.Options{Workspace: c.workspace, ResolvePath: store.ResolvePath}})
	apiServer := api.New(api.Deps{Policy: st, Tokens: tokens, Store: st, TokenAdmin: tokens, OpenAPI: toolgate.OpenAPI, Logger: log, Sessions: ui.Sessions()})
	r := chi.NewRouter()
	r.Use(middleware.RequestID, middleware.Recoverer)
	apiServer.Mount(r)
	ui.Mount(r)
	a.handler = r
	return a, nil
}
