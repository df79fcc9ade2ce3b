package service_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/asks"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/pg"
)

// TestCheckDeniesWhenAsksCannotBeStored: with the shared database of the
// pending asks stopped, a /check whose call the policy asks about answers
// deny at once, saying the approval service is unavailable (openapi.yaml:
// new asks fail closed), instead of a 503 that a client might read as
// "no decision".
func TestCheckDeniesWhenAsksCannotBeStored(t *testing.T) {
	cluster := pgtest.Start(t)
	dsn := cluster.NewDatabase(t)
	ctx := context.Background()
	db, err := pg.Open(ctx, dsn, pg.Options{OpTimeout: 2 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	shared, err := asks.OpenApprovals(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	mgr := approval.New(approval.Options{Shared: shared, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(mgr.Shutdown)

	dir := t.TempDir()
	st, err := inforce.Open(dir, inforce.Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tokens, _, err := auth.OpenTokens(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetToolLevel("bash", "ask"); err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	api.New(api.Deps{Policy: st, Tokens: tokens, Approvals: mgr, Logger: slog.New(slog.DiscardHandler)}).Mount(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	d := &doors{srv: srv, st: st, tokens: tokens}
	admin, _ := tokens.AdminToken()

	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	status, body := d.rest(t, admin, "POST", "/api/v1/check",
		map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "make deploy"}, "wait_seconds": 5})
	var got struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	_ = json.Unmarshal(body, &got)
	if status != http.StatusOK || got.Decision != "deny" || got.Reason != service.MsgApprovalsUnavailable {
		t.Errorf("check while the database is down: got %d %s, want 200 deny with reason %q", status, body, service.MsgApprovalsUnavailable)
	}
}
