package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/decisionlog"
	"github.com/toolgate/toolgate/store/history"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/web"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// testConfig is a config as parseFlags makes it, for a config dir of its own.
func testConfig(t *testing.T) config {
	t.Helper()
	dir := t.TempDir()
	return config{configDir: filepath.Join(dir, "config"), workspace: dir, addr: "127.0.0.1:8765",
		decisionLog: true, logRetention: time.Hour, logMaxRows: 1000, approvalTimeout: time.Minute, hookWait: time.Second}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// settled waits until the process is back to fds open descriptors and at
// most goroutines goroutines, and reports what it saw otherwise.
func settled(t *testing.T, what string, fds, goroutines int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		gotFDs, gotG := openFDs(t), runtime.NumGoroutine()
		if gotFDs <= fds && gotG <= goroutines {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("%s: %d open fds (want %d), %d goroutines (want at most %d)\n%s", what, gotFDs, fds, gotG, goroutines, buf)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWireFailureClosesWhatItOpened: a start that fails at a later step
// releases everything the earlier steps opened: the policy store's watcher
// (an inotify descriptor and a goroutine), the SQLite files, the approval
// manager's goroutines, the hub. The descriptors and goroutines of the
// process come back to what they were.
func TestWireFailureClosesWhatItOpened(t *testing.T) {
	cases := []struct {
		note  string
		setup func(t *testing.T, c *config)
		want  string
	}{
		{note: "decision log path is a directory (the last storage step)", setup: func(t *testing.T, c *config) {
			if err := os.MkdirAll(filepath.Join(c.configDir, decisionlog.File), 0o700); err != nil {
				t.Fatal(err)
			}
		}, want: decisionlog.File},
		{note: "webhook without a secret (after the manager, hub and metrics)", setup: func(t *testing.T, c *config) {
			c.webhooks.urls = urlList{"https://receiver.example/hook"}
		}, want: "secret"},
		{note: "unreadable tokens.json (after the policy store)", setup: func(t *testing.T, c *config) {
			if err := os.MkdirAll(c.configDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(c.configDir, "tokens.json"), []byte("[{"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, want: "tokens.json"},
	}
	// One good start first, so that lazily made runtime state (the
	// inotify instance's first use, pools) is not counted as a leak.
	warm, err := wire(testConfig(t), quietLog())
	if err != nil {
		t.Fatal(err)
	}
	warm.close()
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			cfg := testConfig(t)
			c.setup(t, &cfg)
			fds, goroutines := openFDs(t), runtime.NumGoroutine()
			a, err := wire(cfg, quietLog())
			if err == nil {
				a.close()
				t.Fatalf("wire succeeded, want an error about %s", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to name %s", err, c.want)
			}
			settled(t, "after the failed start", fds, goroutines)
			// The config dir's lock is free: a writer can edit config.yaml.
			st, err := inforce.Open(cfg.configDir, inforce.Options{Logger: quietLog()})
			if err != nil {
				t.Fatalf("store.Open after the failed start: %v", err)
			}
			defer st.Close()
			if _, err := st.SetToolLevel("grep", "deny"); err != nil {
				t.Errorf("an edit after the failed start: %v", err)
			}
		})
	}
}

// TestWireCloseReleasesEverything: a started server's close gives back its
// descriptors and goroutines, and a second close does nothing.
func TestWireCloseReleasesEverything(t *testing.T) {
	warm, err := wire(testConfig(t), quietLog())
	if err != nil {
		t.Fatal(err)
	}
	warm.close()
	fds, goroutines := openFDs(t), runtime.NumGoroutine()
	a, err := wire(testConfig(t), quietLog())
	if err != nil {
		t.Fatal(err)
	}
	if openFDs(t) <= fds {
		t.Errorf("a started server holds no more descriptors than none: the count cannot see leaks")
	}
	if err := a.close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := a.close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	settled(t, "after close", fds, goroutines)
}

// TestWireBadDatabaseURL: a malformed URL and a server that is not there
// stop the start with an error that names the flag and shows no password,
// and leave nothing open.
func TestWireBadDatabaseURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	cases := []struct {
		note, url   string
		unavailable bool
	}{
		{note: "malformed", url: "postgres://u:hunter2secret@127.0.0.1:notaport/db"},
		{note: "nothing listening", url: "postgres://u:hunter2secret@" + closed + "/db?sslmode=disable&connect_timeout=2", unavailable: true},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.databaseURL = c.url
			fds, goroutines := openFDs(t), runtime.NumGoroutine()
			a, err := wire(cfg, quietLog())
			if err == nil {
				a.close()
				t.Fatal("wire succeeded")
			}
			if !strings.Contains(err.Error(), "--database-url") || strings.Contains(err.Error(), "hunter2secret") {
				t.Errorf("err = %v, want it to name --database-url and hide the password", err)
			}
			if got := errors.Is(err, store.ErrUnavailable); got != c.unavailable {
				t.Errorf("errors.Is(err, ErrUnavailable) = %v, want %v", got, c.unavailable)
			}
			settled(t, "after the failed start", fds, goroutines)
			if _, err := os.Stat(filepath.Join(cfg.configDir, store.ConfigFile)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a start on a database wrote config.yaml into the config dir (%v)", err)
			}
		})
	}
}

// replica is one wired server on an httptest listener.
type replica struct {
	a     *app
	srv   *httptest.Server
	token string
}

func startReplica(t *testing.T, cfg config) *replica {
	t.Helper()
	a, err := wire(cfg, quietLog())
	if err != nil {
		t.Fatalf("wire: %v", err)
	}
	srv := httptest.NewServer(a.handler)
	t.Cleanup(func() { srv.Close(); a.close() })
	tok, err := os.ReadFile(a.tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	return &replica{a: a, srv: srv, token: strings.TrimSpace(string(tok))}
}

func (r *replica) do(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, r.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (r *replica) level(t *testing.T, command string) string {
	t.Helper()
	st, out := r.do(t, "POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": command}})
	if st != 200 {
		t.Fatalf("evaluate: %d %v", st, out)
	}
	level, _ := out["level"].(string)
	return level
}

// TestWirePostgresReplicas: two servers wired on one database (the first
// imports its config dir, the second starts with only the admin token):
// an edit through one decides on the other within a second, /readyz is
// ready on both, and no SQLite file or config.yaml is made.
func TestWirePostgresReplicas(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	c1 := testConfig(t)
	c1.databaseURL = dsn
	if err := os.MkdirAll(c1.configDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c1.configDir, store.ConfigFile), []byte("# ours\npermissions:\n  schema: tiered_policy\n  defaults: {\"*\": ask}\n  tools: {bash: ask}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r1 := startReplica(t, c1)
	c2 := testConfig(t)
	c2.databaseURL = dsn
	if err := os.MkdirAll(c2.configDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c2.configDir, "api_token"), []byte(r1.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r2 := startReplica(t, c2)
	if r2.token != r1.token {
		t.Fatal("the second replica replaced its api_token")
	}
	for i, r := range []*replica{r1, r2} {
		if st, out := r.do(t, "GET", "/readyz", nil); st != 200 {
			t.Errorf("replica %d /readyz: %d %v", i+1, st, out)
		}
		if got := r.level(t, "make all"); got != "ask" {
			t.Errorf("replica %d before the edit: %s, want ask (the imported policy)", i+1, got)
		}
	}
	st, out := r1.do(t, "POST", "/api/v1/permissions/rules", map[string]any{"id": "make_ok", "tools": []string{"bash"}, "pattern": "make *", "action": "allow"})
	if st != 201 && st != 200 {
		t.Fatalf("create rule: %d %v", st, out)
	}
	if got := r1.level(t, "make all"); got != "allow" {
		t.Fatalf("the replica that made the edit decides %s, want allow", got)
	}
	start := time.Now()
	for r2.level(t, "make all") != "allow" {
		if time.Since(start) > time.Second {
			t.Fatalf("the other replica does not decide with the edit after %v", time.Since(start))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Either replica exports the stored section with its comments.
	for i, r := range []*replica{r1, r2} {
		req, _ := http.NewRequest("GET", r.srv.URL+"/api/v1/permissions/export", nil)
		req.Header.Set("Authorization", "Bearer "+r.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "# ours") || !strings.Contains(string(body), "make_ok") {
			t.Errorf("replica %d export: %d %s; want the imported comment and the new rule", i+1, resp.StatusCode, body)
		}
	}
	// A token made through one replica works on the other.
	st, out = r1.do(t, "POST", "/api/v1/tokens", map[string]any{"name": "agent-1", "role": "agent"})
	secret, _ := out["secret"].(string)
	if st != 201 || secret == "" {
		t.Fatalf("create token: %d %v", st, out)
	}
	agent := &replica{srv: r2.srv, token: secret}
	start = time.Now()
	for {
		st, _ := agent.do(t, "POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "ls"}})
		if st == 200 {
			t.Logf("token made on one replica works on the other after %v", time.Since(start))
			break
		}
		if time.Since(start) > time.Second {
			t.Fatalf("a token made on one replica does not work on the other after %v (status %d)", time.Since(start), st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, name := range []string{decisionlog.File, history.File} {
		if _, err := os.Stat(filepath.Join(c2.configDir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists in a database replica's config dir (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(c2.configDir, store.ConfigFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("config.yaml written into the second replica's config dir (%v)", err)
	}
}

// TestWirePostgresGone: with the database stopped, /readyz answers 503,
// evaluate keeps deciding from memory and an edit answers 503; after the
// database is back, all of it recovers without a restart.
func TestWirePostgresGone(t *testing.T) {
	cl := pgtest.Start(t)
	cfg := testConfig(t)
	cfg.databaseURL = cl.NewDatabase(t)
	r := startReplica(t, cfg)
	if st, out := r.do(t, "GET", "/readyz", nil); st != 200 {
		t.Fatalf("/readyz: %d %v", st, out)
	}
	cookie := signedInElsewhere(t, cfg.databaseURL)
	if st := r.page(t, "/tools", cookie); st != 200 {
		t.Fatalf("a session made through another replica: GET /tools %d, want 200", st)
	}
	if err := cl.Stop(); err != nil {
		t.Fatal(err)
	}
	if st := r.page(t, "/tools", cookie); st != http.StatusSeeOther && st != http.StatusFound {
		t.Errorf("a session while the database is stopped: GET /tools %d, want a redirect to /login (fail closed)", st)
	}
	if st, out := r.do(t, "GET", "/readyz", nil); st != 503 || out["status"] != "storage_unavailable" {
		t.Errorf("/readyz with the database stopped: %d %v, want 503 storage_unavailable", st, out)
	}
	readyzHidesConnection(t, r, cfg.databaseURL)
	if got := r.level(t, "git status"); got == "" {
		t.Error("evaluate with the database stopped gave no level")
	}
	if st, out := r.do(t, "PUT", "/api/v1/permissions/tools/grep", map[string]any{"level": "deny"}); st != 503 {
		t.Errorf("an edit with the database stopped: %d %v, want 503", st, out)
	}
	if err := cl.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, _ := r.do(t, "GET", "/readyz", nil)
		if st == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d 20 s after the database came back", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st, out := r.do(t, "PUT", "/api/v1/permissions/tools/grep", map[string]any{"level": "deny"}); st != 200 {
		t.Errorf("an edit after the database came back: %d %v, want 200", st, out)
	}
	if st := r.page(t, "/tools", cookie); st != 200 {
		t.Errorf("the session after the database came back: GET /tools %d, want 200", st)
	}
}

// readyzHidesConnection polls /readyz for a while with the database gone
// (its error changes as the pool tries to reconnect) and fails when a body
// shows the connection's user, host or port: they are the operator's, and
// /readyz answers any reader.
func readyzHidesConnection(t *testing.T, r *replica, dsn string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		_, out := r.do(t, "GET", "/readyz", nil)
		body := fmt.Sprint(out)
		for _, secret := range []string{u.User.Username(), u.Hostname() + ":" + u.Port(), "host=", "user="} {
			if strings.Contains(body, secret) {
				t.Fatalf("/readyz shows %q of the database connection: %s", secret, body)
			}
		}
	}
}

// signedInElsewhere makes an admin browser session in the database, as
// another replica's sign-in does, and returns its cookie.
func signedInElsewhere(t *testing.T, dsn string) *http.Cookie {
	t.Helper()
	ctx := context.Background()
	db, err := pg.Open(ctx, dsn, pg.Options{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sessions, err := auth.OpenPGSessions(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := sessions.Create(ctx, auth.Principal{TokenID: "admin", Name: "admin", Role: auth.RoleAdmin}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Cookie{Name: web.SessionCookie, Value: id}
}

// page GETs a page with a session cookie and returns the status, without
// following redirects.
func (r *replica) page(t *testing.T, path string, c *http.Cookie) int {
	t.Helper()
	req, _ := http.NewRequest("GET", r.srv.URL+path, nil)
	req.AddCookie(c)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestWireExportFiles: without a database the export route reads
// config.yaml through the file backend: the permissions entry with its
// comments, without the file's other keys.
func TestWireExportFiles(t *testing.T) {
	cfg := testConfig(t)
	if err := os.MkdirAll(cfg.configDir, 0o700); err != nil {
		t.Fatal(err)
	}
	text := "model: gpt\n# the policy\npermissions:\n  schema: tiered_policy # tiered\n  defaults: {\"*\": ask}\n"
	if err := os.WriteFile(filepath.Join(cfg.configDir, store.ConfigFile), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startReplica(t, cfg)
	req, _ := http.NewRequest("GET", r.srv.URL+"/api/v1/permissions/export", nil)
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	got := string(body)
	if resp.StatusCode != 200 || !strings.Contains(got, "# the policy") || !strings.Contains(got, "# tiered") || strings.Contains(got, "model") {
		t.Errorf("export: %d %q; want the permissions entry with its comments and no other key", resp.StatusCode, got)
	}
}
