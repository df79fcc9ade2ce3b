package integration

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// faultConfig is the good policy of the fault tests: read_file is denied,
// which no fallback policy would decide, so "the last good policy is in
// force" is visible in one evaluation.
const faultConfig = `# fault test config
keep: me
permissions:
  enabled: true
  schema: tiered_policy
  defaults: {"*": ask}
  tools:
    read_file: deny
    bash: ask
  rules:
    - {id: ls_ok, tools: [bash], pattern: "ls *", action: allow}
`

// diskRuleIDs parses config.yaml and returns the ids of its rules; the file
// must parse.
func diskRuleIDs(t *testing.T, s *Server) map[string]bool {
	t.Helper()
	var doc struct {
		Permissions struct {
			Rules []map[string]any `yaml:"rules"`
		} `yaml:"permissions"`
	}
	raw := s.ReadFile("config.yaml")
	if err := yaml.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatalf("config.yaml does not parse after a crash: %v\n%s", err, raw)
	}
	ids := map[string]bool{}
	for _, r := range doc.Permissions.Rules {
		if id, ok := r["id"].(string); ok {
			ids[id] = true
		}
	}
	return ids
}

// TestFaultKillDuringWriteStorm: several writers create rules through the
// API while the server is SIGKILLed at a random moment; after a restart on
// the same config dir every acknowledged rule is in config.yaml, the file
// parses and keeps its other keys. Several rounds.
func TestFaultKillDuringWriteStorm(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: faultConfig})
	rounds := bySoak(4, 25)
	writers := 4
	total := 0
	for round := 0; round < rounds; round++ {
		var mu sync.Mutex
		acked := map[string]bool{}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					id := fmt.Sprintf("storm_r%d_w%d_%d", round, w, i)
					rule := map[string]any{"id": id, "tools": []string{"bash"}, "pattern": "echo " + id, "action": "allow"}
					st, _, err := relDo(s, s.Token, "POST", "/api/v1/permissions/rules", rule)
					if err != nil {
						return // the server is gone
					}
					if st == 201 {
						mu.Lock()
						acked[id] = true
						mu.Unlock()
					} else if st >= 500 {
						t.Errorf("round %d: create %s: status %d", round, id, st)
					}
				}
			}(w)
		}
		// Kill once the storm is going (a few writes acknowledged), at a
		// random moment after that.
		WaitFor(t, 10*time.Second, "the first acknowledged writes", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(acked) >= 3
		})
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		s.Kill()
		close(stop)
		wg.Wait()
		s.start()
		ids := diskRuleIDs(t, s)
		for id := range acked {
			if !ids[id] {
				t.Errorf("round %d: acknowledged rule %s is missing after SIGKILL", round, id)
			}
		}
		if !strings.Contains(s.ReadFile("config.yaml"), "keep: me") {
			t.Errorf("round %d: other keys of config.yaml lost", round)
		}
		if got := relLevel(t, s, "read_file", map[string]any{"path": "a.txt"}); got != "deny" {
			t.Errorf("round %d: policy after restart: read_file %s, want deny", round, got)
		}
		total += len(acked)
		t.Logf("round %d: %d acknowledged writes, all present", round, len(acked))
	}
	if total == 0 {
		t.Fatal("no write was acknowledged in any round")
	}
}

// mountTmpfs mounts a small tmpfs for the test, or returns "" with the
// reason it cannot.
func mountTmpfs(t *testing.T, size string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput()
	if err != nil {
		return "", fmt.Sprintf("mount -t tmpfs failed: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir, ""
}

// fillDisk writes a file until the file system is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			return
		}
	}
}

// wantWriteRefused checks that a rule creation failed with a clear error
// and that config.yaml and the decisions are those of the last good policy.
func wantWriteRefused(t *testing.T, s *Server, what, id string, words ...string) {
	t.Helper()
	before := s.ReadFile("config.yaml")
	st, body, err := relDo(s, s.Token, "POST", "/api/v1/permissions/rules",
		map[string]any{"id": id, "tools": []string{"bash"}, "pattern": "make *", "action": "allow"})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	t.Logf("%s: write answered %d %s", what, st, body)
	if st < 400 {
		t.Errorf("%s: write accepted (%d)", what, st)
	}
	msg := strings.ToLower(string(body))
	clear := false
	for _, w := range words {
		clear = clear || strings.Contains(msg, w)
	}
	if !clear {
		t.Errorf("%s: error does not say why (want one of %v): %s", what, words, body)
	}
	if after := s.ReadFile("config.yaml"); after != before {
		t.Errorf("%s: config.yaml changed by a refused write", what)
	}
	if got := relLevel(t, s, "read_file", map[string]any{"path": "a.txt"}); got != "deny" {
		t.Errorf("%s: decisions: read_file %s, want deny (the last good policy)", what, got)
	}
	if got := relLevel(t, s, "bash", map[string]any{"command": "make all"}); got != "ask" {
		t.Errorf("%s: decisions: make all %s, want ask", what, got)
	}
}

// TestFaultFullDiskAndReadOnly: on a small tmpfs config dir, a full disk
// and then a read-only remount refuse writes with a clear error, change
// nothing, and decisions go on; once space is back writes work again.
func TestFaultFullDiskAndReadOnly(t *testing.T) {
	dir, why := mountTmpfs(t, "2m")
	if dir == "" {
		t.Fatal("no tmpfs (the suite runs as root, as `make test` and CI do): " + why)
	}
	cfg := filepath.Join(dir, "config")
	s := StartServer(t, ServerOptions{ConfigDir: cfg, ConfigYAML: faultConfig, Args: []string{"--decision-log=false"}})
	filler := filepath.Join(dir, "filler")
	fillDisk(t, filler)
	wantWriteRefused(t, s, "full disk", "full_disk", "space", "disk", "full", "write")
	os.Remove(filler)
	if st, body, _ := relDo(s, s.Token, "POST", "/api/v1/permissions/rules",
		map[string]any{"id": "after_space", "tools": []string{"bash"}, "pattern": "cmake *", "action": "allow"}); st != 201 {
		t.Errorf("write after freeing space: %d %s", st, body)
	}
	// A read-only bind mount over the config dir: files the server already
	// holds open (the approval history) keep working, every new write by
	// path meets a read-only file system.
	if out, err := exec.Command("mount", "--bind", cfg, cfg).CombinedOutput(); err != nil {
		t.Fatalf("bind mount: %v %s", err, out)
	}
	defer exec.Command("umount", "-l", cfg).Run()
	if out, err := exec.Command("mount", "-o", "remount,ro,bind", cfg).CombinedOutput(); err != nil {
		t.Fatalf("remount ro: %v %s", err, out)
	}
	wantWriteRefused(t, s, "read-only config dir", "read_only", "read-only", "read only", "write", "permission")
	if strings.Contains(s.Output(), "panic") {
		t.Errorf("server output has a panic:\n%s", s.Output())
	}
}

// TestFaultConfigBrokenWhileRunning: config.yaml replaced by garbage,
// truncated mid-entry, or deleted while the server runs: decisions stay on
// the last good policy, /readyz names the problem, and a fixed file is
// picked up without a restart.
func TestFaultConfigBrokenWhileRunning(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: faultConfig})
	path := filepath.Join(s.ConfigDir, "config.yaml")
	good := faultConfig
	cut := strings.Index(good, `pattern: "ls *"`) + len(`pattern: "l`)
	breaks := []struct {
		note  string
		apply func()
	}{
		{"garbage", func() { writeFile(t, path, "permissions: [\x00\xff}}: :\n\t- -") }},
		{"truncated mid-entry", func() { writeFile(t, path, good[:cut]) }},
		{"deleted", func() { os.Remove(path) }},
	}
	for i, b := range breaks {
		t.Run(b.note, func(t *testing.T) {
			b.apply()
			WaitFor(t, 5*time.Second, "/readyz to report config.yaml", func() bool {
				_, body := readyBody(t, s)
				return strings.Contains(body, "config.yaml")
			})
			if got := relLevel(t, s, "read_file", map[string]any{"path": "a.txt"}); got != "deny" {
				t.Errorf("read_file %s with a %s config, want deny (last good policy)", got, b.note)
			}
			if got := relLevel(t, s, "bash", map[string]any{"command": "ls -la"}); got != "allow" {
				t.Errorf("ls -la %s with a %s config, want allow (last good rule)", got, b.note)
			}
			fixed := strings.Replace(good, "read_file: deny", fmt.Sprintf("read_file: deny\n    grep: %s", []string{"allow", "ask", "deny"}[i%3]), 1)
			writeFile(t, path, fixed)
			WaitFor(t, 5*time.Second, "the fixed config to be picked up", func() bool {
				_, body := readyBody(t, s)
				return !strings.Contains(body, "config.yaml")
			})
			if got := relLevel(t, s, "grep", map[string]any{"path": "a.txt"}); got != []string{"allow", "ask", "deny"}[i%3] {
				t.Errorf("after the fix: grep %s, want %s", got, []string{"allow", "ask", "deny"}[i%3])
			}
		})
	}
}

// TestFaultConfigEmptied: a config.yaml truncated to zero bytes (what a
// non-atomic writer leaves after a crash) keeps the last good policy in
// force: read_file was denied and stays denied, and /readyz says the file is
// empty.
func TestFaultConfigEmptied(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: faultConfig})
	writeFile(t, filepath.Join(s.ConfigDir, "config.yaml"), "")
	var ready string
	WaitFor(t, 5*time.Second, "readyz to report the empty file", func() bool {
		_, ready = readyBody(t, s)
		return strings.Contains(ready, "empty")
	})
	if got := relLevel(t, s, "read_file", map[string]any{"path": "a.txt"}); got != "deny" {
		t.Errorf("an emptied config.yaml: read_file %s, want deny (the last good policy)", got)
	}
	t.Logf("readyz: %s", ready)
}

// TestFaultDecisionDBRemovedOrLocked: the decision log's SQLite file is
// deleted, or locked by another process, while the server runs; decisions
// keep coming without errors.
func TestFaultDecisionDBRemovedOrLocked(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: faultConfig})
	db := filepath.Join(s.ConfigDir, "decisions.db")
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("no decision log at %s: %v", db, err)
	}
	relLevel(t, s, "bash", map[string]any{"command": "ls"})
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(db + suffix)
	}
	for i := 0; i < 50; i++ {
		if got := relLevel(t, s, "bash", map[string]any{"command": "ls -l"}); got != "allow" {
			t.Fatalf("after removing the db: %s", got)
		}
	}
	// Lock: a second writer holds an exclusive transaction on a fresh db file
	// (SQLite's locks are file locks, so this connection in the test process
	// locks the server out as another process would).
	s.Restart()
	locker, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	conn, err := locker.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatalf("lock the db: %v", err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")
	start := time.Now()
	for i := 0; i < 50; i++ {
		if got := relLevel(t, s, "bash", map[string]any{"command": "ls -l"}); got != "allow" {
			t.Fatalf("with the db locked: %s", got)
		}
	}
	t.Logf("50 decisions with the db locked in %v", time.Since(start))
}

// TestFaultVanishingClients: clients that send half a body and vanish,
// cancel requests in flight, or drop a websocket mid-handshake leave the
// server healthy and serving.
func TestFaultVanishingClients(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: faultConfig})
	n := bySoak(50, 500)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(3)
		go func() { // half a body, then gone
			defer wg.Done()
			c, err := net.Dial("tcp", s.Addr)
			if err != nil {
				return
			}
			fmt.Fprintf(c, "POST /api/v1/evaluate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"tool_name\":\"ba", s.Token)
			c.Close()
		}()
		go func() { // cancelled in flight
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(3))*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/api/v1/evaluate",
				strings.NewReader(`{"tool_name":"bash","tool_args":{"command":"ls"}}`))
			req.Header.Set("Authorization", "Bearer "+s.Token)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		go func() { // websocket upgrade, then gone
			defer wg.Done()
			c, err := net.Dial("tcp", s.Addr)
			if err != nil {
				return
			}
			fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nAuthorization: Bearer %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", s.Addr, s.URL, s.Token)
			c.SetReadDeadline(time.Now().Add(time.Second))
			_, _ = io.ReadFull(c, make([]byte, 20))
			c.Close()
		}()
	}
	wg.Wait()
	for i := 0; i < 20; i++ {
		if got := relLevel(t, s, "bash", map[string]any{"command": "ls"}); got != "allow" {
			t.Fatalf("after vanishing clients: %s", got)
		}
	}
	if strings.Contains(s.Output(), "panic") {
		t.Errorf("server output has a panic:\n%s", s.Output())
	}
}

// TestFaultSlowloris: clients that send their headers a byte at a time are
// cut off by the server's ReadHeaderTimeout (5 s) while others are served.
func TestFaultSlowloris(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: faultConfig})
	slow := bySoak(20, 200)
	var cut atomic.Int32
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < slow; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", s.Addr)
			if err != nil {
				return
			}
			defer c.Close()
			req := "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("a", 200)
			for j := 0; j < len(req); j++ {
				if _, err := c.Write([]byte{req[j]}); err != nil {
					cut.Add(1)
					return
				}
				c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
				if _, err := c.Read(make([]byte, 1)); err == io.EOF || (err != nil && !isTimeout(err)) {
					cut.Add(1)
					return
				}
				if time.Since(start) > 15*time.Second {
					return
				}
			}
		}()
	}
	// Others are served while the slow clients hang on.
	for time.Since(start) < 3*time.Second {
		if got := relLevel(t, s, "bash", map[string]any{"command": "ls"}); got != "allow" {
			t.Fatalf("during slowloris: %s", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	wg.Wait()
	t.Logf("%d of %d slow clients cut off after %v", cut.Load(), slow, time.Since(start).Round(time.Millisecond))
	if int(cut.Load()) != slow {
		t.Errorf("%d of %d slow clients were cut off, want all", cut.Load(), slow)
	}
	if time.Since(start) > 14*time.Second {
		t.Errorf("slow clients held on for %v; ReadHeaderTimeout is 5 s", time.Since(start))
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
