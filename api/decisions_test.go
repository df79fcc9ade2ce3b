package api_test

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/observe"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/decisionlog"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// decisionServer is an API over a real store, token set and decision log.
type decisionServer struct {
	url   string
	token string
	log   *decisionlog.Log
	dbDir string
}

func newDecisionServer(tb testing.TB, logOn bool, opts decisionlog.Options) *decisionServer {
	tb.Helper()
	dir := tb.TempDir()
	st, err := inforce.Open(dir, inforce.Options{Workspace: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	tokens, _, err := auth.OpenTokens(dir)
	if err != nil {
		tb.Fatal(err)
	}
	token, err := tokens.AdminToken()
	if err != nil {
		tb.Fatal(err)
	}
	ds := &decisionServer{token: token, dbDir: dir}
	metrics := observe.NewMetrics(observe.MetricsOptions{})
	var dl service.DecisionLog
	if logOn {
		var err error
		ds.log, err = decisionlog.Open(filepath.Join(dir, "decisions.db"), opts)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = ds.log.Close() })
		dl = ds.log
	}
	srv := api.New(api.Deps{Policy: st, Tokens: tokens, Observer: observe.NewRecorder(dl, metrics, true),
		Decisions: dl, Metrics: metrics.Handler()})
	r := chi.NewRouter()
	r.Use(api.RequestLog(discardLogger()), middleware.Recoverer)
	srv.Mount(r)
	hs := httptest.NewServer(r)
	tb.Cleanup(hs.Close)
	ds.url = hs.URL
	return ds
}

func (ds *decisionServer) evaluate(tb testing.TB, client *http.Client, body []byte) {
	req, _ := http.NewRequest("POST", ds.url+"/api/v1/evaluate", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+ds.token)
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	var buf [512]byte
	for {
		if _, err := resp.Body.Read(buf[:]); err != nil {
			break
		}
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		tb.Fatalf("evaluate: status %d", resp.StatusCode)
	}
}

// TestObserveNeverBlocksOnAStalledLog holds SQLite's write lock so the
// log's writer stalls: evaluations still answer, and the overflow is
// counted as dropped.
func TestObserveNeverBlocksOnAStalledLog(t *testing.T) {
	const queue, total = 8, 100
	ds := newDecisionServer(t, true, decisionlog.Options{QueueSize: queue, BatchSize: 1})
	locker, err := sql.Open("sqlite", "file:"+filepath.Join(ds.dbDir, "decisions.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	conn, err := locker.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"tool_name":"bash","tool_args":{"command":"ls -la"}}`)
	for range total {
		ds.evaluate(t, http.DefaultClient, body)
	}
	if got := ds.log.Dropped(); got < total-queue-1 {
		t.Errorf("dropped %d with the writer stalled; want at least %d", got, total-queue-1)
	}
	if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if err := ds.log.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := ds.log.Written()+ds.log.Dropped(), uint64(total); got != want {
		t.Errorf("written+dropped = %d, want %d", got, want)
	}
}

// BenchmarkEvaluateHTTP measures POST /api/v1/evaluate over loopback HTTP
// with the decision log on (full args, as the preview needs) and off.
func BenchmarkEvaluateHTTP(b *testing.B) {
	body := []byte(`{"tool_name":"bash","tool_args":{"command":"curl -H \"Authorization: Bearer abc\" https://example.com/x?token=1"}}`)
	for _, c := range []struct {
		name  string
		logOn bool
	}{{"log=off", false}, {"log=on", true}} {
		b.Run(c.name, func(b *testing.B) {
			ds := newDecisionServer(b, c.logOn, decisionlog.Options{})
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					ds.evaluate(b, client, body)
				}
			})
			b.StopTimer()
			if ds.log != nil {
				_ = ds.log.Flush(context.Background())
				b.ReportMetric(float64(ds.log.Dropped()), "dropped")
			}
		})
	}
}

// TestDecisionSourceIsTheRoute: each decision is logged with the source the
// deciding handler hands over, not one guessed from the URL. A Claude Code
// PermissionRequest waits for a person as /check does, so it is "check";
// its PreToolUse is "evaluate". (decisionSource guessed from the path's
// suffix and logged every hook as "evaluate".)
func TestDecisionSourceIsTheRoute(t *testing.T) {
	ds := newDecisionServer(t, true, decisionlog.Options{})
	cases := []struct {
		note, path, payload, want string
	}{
		{note: "evaluate", path: "/api/v1/evaluate", payload: `{"tool_name":"bash","tool_args":{"command":"ls"}}`, want: "evaluate"},
		{note: "claude-code PreToolUse, whose ask waits for a person", path: "/api/v1/hooks/claude-code?wait_seconds=0", payload: string(payload(t, "claude-code/pretooluse-bash.json")), want: "check"},
		{note: "claude-code PreToolUse with ask=agent", path: "/api/v1/hooks/claude-code?ask=agent", payload: string(payload(t, "claude-code/pretooluse-bash.json")), want: "evaluate"},
		{note: "claude-code PermissionRequest", path: "/api/v1/hooks/claude-code", payload: string(payload(t, "claude-code/permissionrequest-bash.json")), want: "check"},
		{note: "gemini BeforeTool", path: "/api/v1/hooks/gemini?wait_seconds=0", payload: string(payload(t, "gemini/beforetool-read-file.json")), want: "check"},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("POST", ds.url+c.path, bytes.NewReader([]byte(c.payload)))
		req.Header.Set("Authorization", "Bearer "+ds.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d %s", c.note, resp.StatusCode, body)
		}
		if err := ds.log.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		got, err := ds.log.Recent(context.Background(), 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: recent: %v %v", c.note, got, err)
		}
		if got[0].Source != c.want {
			t.Errorf("%s: logged source %q, want %q", c.note, got[0].Source, c.want)
		}
	}
}
