package integration

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestReplicasEditDecidesOnAll: an edit through one replica decides on
// every replica; the section's ETag is one across replicas, so a stale
// If-Match through another replica is refused; comments in the section
// survive edits; export reads the section from any replica.
func TestReplicasEditDecidesOnAll(t *testing.T) {
	rs := startReplicas(t, pgtest.Shared(t), 3, nil)
	for i, s := range rs.r {
		if got := relLevel(t, s, "read_file", map[string]any{"path": "a.txt"}); got != "deny" {
			t.Errorf("replica %d: read_file = %s, want deny (the imported policy)", i, got)
		}
		if got := relLevel(t, s, "bash", makeAll); got != "ask" {
			t.Errorf("replica %d: make all = %s, want ask", i, got)
		}
	}

	start := time.Now()
	st, body, err := addRule(rs.r[0], "make_ok", "make *")
	if err != nil || st != 201 {
		t.Fatalf("add rule through replica 0: %d %s %v", st, body, err)
	}
	took := waitLevelOnAll(t, rs.r, start, 5*time.Second, "bash", makeAll, "allow")
	t.Logf("edit through replica 0 decides on replicas 0..2 after %v", took)

	// One version across replicas: replica 1 writes with the ETag it
	// serves; replica 2 is then refused with that same, now stale, ETag.
	resp := rs.r[1].Request(rs.r[1].Token, "GET", "/api/v1/permissions", nil, nil)
	resp.Body.Close()
	etag := resp.Header.Get("ETag")
	if etag == "" {
		t.Fatal("GET permissions through replica 1: no ETag")
	}
	for i, s := range rs.r {
		resp := s.Request(s.Token, "GET", "/api/v1/permissions", nil, nil)
		resp.Body.Close()
		if got := resp.Header.Get("ETag"); got != etag {
			t.Errorf("replica %d: ETag %q, replica 1 serves %q", i, got, etag)
		}
	}
	_, _, body = rs.r[1].Call(rs.r[1].Token, "GET", "/api/v1/permissions", nil, nil)
	sec := DecodeJSON[map[string]any](t, body)
	sec["tools"].(map[string]any)["read_file"] = "ask"
	st, _, body = rs.r[1].Call(rs.r[1].Token, "PUT", "/api/v1/permissions", sec, http.Header{"If-Match": {etag}})
	wantStatus(t, "PUT through replica 1 with the current ETag", st, body, 200, "")
	sec["tools"].(map[string]any)["read_file"] = "allow"
	st, _, body = rs.r[2].Call(rs.r[2].Token, "PUT", "/api/v1/permissions", sec, http.Header{"If-Match": {etag}})
	wantStatus(t, "PUT through replica 2 with the ETag replica 1 just used", st, body, 412, "")
	waitLevelOnAll(t, rs.r, time.Now(), 5*time.Second, "read_file", map[string]any{"path": "a.txt"}, "ask")

	st, body, err = relDo(rs.r[2], rs.r[2].Token, "GET", "/api/v1/permissions/export", nil)
	if err != nil || st != 200 {
		t.Fatalf("export through replica 2: %d %s %v", st, body, err)
	}
	for _, want := range []string{"permissions:", "make_ok", "# team policy: edits must keep this comment", "read_file: ask"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("export lacks %q:\n%s", want, body)
		}
	}
}

// TestReplicasAskAcrossReplicas: an ask made on replica 0 reaches a
// websocket on replica 1 and is answered through replica 2; the /check
// waiting on replica 0 gets that answer; a second answer through any
// replica is 409; two answers at once through two replicas: one wins.
func TestReplicasAskAcrossReplicas(t *testing.T) {
	rs := startReplicas(t, pgtest.Shared(t), 3, nil)
	tok := rs.r[0].Token
	ws1, _ := connectWS(t, rs.r[1], tok)

	res := checkAsync(rs.r[0], tok, askBody("make all", "cli", "s-cross", 60))
	req := ws1.next("approval.requested", "", 10*time.Second)
	id := req.Approval.ID
	if id == "" || req.Approval.Request.ToolName != "bash" {
		t.Fatalf("approval.requested on replica 1: %s", req.Raw)
	}
	// A browser that connects to replica 2 sees the ask in hello (once
	// replica 2 has heard of it: the notification may still be on its way).
	seen := time.Now()
	WaitFor(t, 5*time.Second, "hello on replica 2 to list the pending ask", func() bool {
		ws, hello := connectWS(t, rs.r[2], tok)
		ws.conn.Close()
		return hasApproval(hello.Pending, id)
	})
	t.Logf("hello on replica 2 lists the ask %v after replica 1 pushed it", time.Since(seen))
	st, body := decide(t, rs.r[2], tok, id, "allow_once")
	wantStatus(t, "answer through replica 2", st, body, 200, "")
	got := answered(t, res, 10*time.Second)
	if got.Decision != "allow" {
		t.Errorf("check waiting on replica 0: decision %q, want allow", got.Decision)
	}
	ws1.next("approval.resolved", id, 10*time.Second)
	for i, s := range rs.r {
		st, body := decide(t, s, tok, id, "deny")
		wantStatus(t, fmt.Sprintf("second answer through replica %d", i), st, body, 409, "")
	}

	// Two answers at once through two replicas: exactly one wins, and the
	// approval's own wait (GET ?wait_seconds) on the third wakes with it.
	res = checkAsync(rs.r[0], tok, askBody("make other", "cli", "s-race", 60))
	id = ws1.next("approval.requested", "", 10*time.Second).Approval.ID
	waited := make(chan checkResult, 1)
	go func() {
		st, b, err := relDo(rs.r[0], tok, "GET", "/api/v1/approvals/"+id+"?wait_seconds=30", nil)
		waited <- checkResult{status: st, body: b, err: err}
	}()
	time.Sleep(100 * time.Millisecond) // let the wait start
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, s := range []*Server{rs.r[1], rs.r[2]} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _ = relDo(s, tok, "POST", "/api/v1/approvals/"+id+"/decision", map[string]any{"choice": []string{"deny", "allow_once"}[i]})
		}()
	}
	wg.Wait()
	if !(codes[0] == 200 && codes[1] == 409 || codes[0] == 409 && codes[1] == 200) {
		t.Errorf("two answers at once through replicas 1 and 2: statuses %v, want one 200 and one 409", codes)
	}
	want := map[bool]string{true: "deny", false: "allow"}[codes[0] == 200]
	if got := answered(t, res, 10*time.Second); got.Decision != want {
		t.Errorf("check after the race: decision %q, want %q (the winner's)", got.Decision, want)
	}
	select {
	case w := <-waited:
		a := DecodeJSON[wsApproval](t, w.body)
		if w.err != nil || w.status != 200 || a.Status == "pending" {
			t.Errorf("wait on replica 0: %d %s %v, want the answered approval", w.status, w.body, w.err)
		}
	case <-time.After(10 * time.Second):
		t.Error("GET approval ?wait_seconds on replica 0 did not wake for an answer given on another replica")
	}

	// A browser answers over its websocket on replica 2 an ask made on
	// replica 1; a second browser answer on replica 1 is a conflict.
	ws2, _ := connectWS(t, rs.r[2], tok)
	res = checkAsync(rs.r[1], tok, askBody("make third", "cli", "s-ws", 60))
	id = ws2.next("approval.requested", "", 10*time.Second).Approval.ID
	if err := ws2.conn.WriteJSON(map[string]any{"type": "approval.decide", "id": id, "choice": "allow_once"}); err != nil {
		t.Fatal(err)
	}
	if d := ws2.next("approval.decided", id, 10*time.Second); d.Approval.Status != "allowed" {
		t.Errorf("approval.decided on replica 2: status %q, want allowed", d.Approval.Status)
	}
	if got := answered(t, res, 10*time.Second); got.Decision != "allow" {
		t.Errorf("check on replica 1 answered over replica 2's websocket: %q, want allow", got.Decision)
	}
	ws1.next("approval.resolved", id, 10*time.Second)
	if err := ws1.conn.WriteJSON(map[string]any{"type": "approval.decide", "id": id, "choice": "deny"}); err != nil {
		t.Fatal(err)
	}
	if e := ws1.next("error", id, 10*time.Second); e.Code != "conflict" {
		t.Errorf("second answer over replica 1's websocket: code %q, want conflict", e.Code)
	}
}

// TestReplicasJoinAcrossReplicas: the same ask (same session and call)
// sent through two replicas, as an agent retrying through the load
// balancer would, is one approval: browsers see one prompt, one answer
// through a third replica releases both waiting checks.
func TestReplicasJoinAcrossReplicas(t *testing.T) {
	rs := startReplicas(t, pgtest.Shared(t), 3, nil)
	tok := rs.r[0].Token
	ws2, _ := connectWS(t, rs.r[2], tok)
	body := askBody("make deploy", "cli", "s-join", 60)
	first := checkAsync(rs.r[0], tok, body)
	id := ws2.next("approval.requested", "", 10*time.Second).Approval.ID
	second := checkAsync(rs.r[1], tok, body)
	if m, dup := ws2.await("approval.requested", "", 2*time.Second); dup {
		t.Errorf("the same ask through replica 1 opened a second approval %s (first %s)", m.Approval.ID, id)
	}
	st, b := decide(t, rs.r[2], tok, id, "allow_once")
	wantStatus(t, "answer through replica 2", st, b, 200, "")
	for i, res := range []<-chan checkResult{first, second} {
		got := answered(t, res, 10*time.Second)
		if got.Decision != "allow" || got.Approval == nil || got.Approval.ID != id {
			t.Errorf("check %d: %+v, want allow with approval %s", i, got, id)
		}
	}
}

// TestReplicasExpiryOutlivesItsReplica: an ask opened through a replica
// that is then SIGKILLed still expires as deny, by another replica:
// browsers on the others see it resolved, and it reads as expired through
// any replica.
func TestReplicasExpiryOutlivesItsReplica(t *testing.T) {
	rs := startReplicas(t, pgtest.Shared(t), 3, nil, "--approval-timeout", "2s")
	tok := rs.r[0].Token
	ws1, _ := connectWS(t, rs.r[1], tok)
	_ = checkAsync(rs.r[0], tok, askBody("make orphan", "cli", "s-orphan", 30))
	id := ws1.next("approval.requested", "", 10*time.Second).Approval.ID
	rs.r[0].Kill()
	m := ws1.next("approval.resolved", id, 20*time.Second)
	if m.Approval.Status != "expired" {
		t.Errorf("approval.resolved on replica 1: status %q, want expired", m.Approval.Status)
	}
	// Replica 2 hears of it through its own notification, a moment later.
	WaitFor(t, 2*time.Second, "the approval to read as expired through replica 2", func() bool {
		st, body, err := relDo(rs.r[2], tok, "GET", "/api/v1/approvals/"+id, nil)
		return err == nil && st == 200 && DecodeJSON[wsApproval](t, body).Status == "expired"
	})
}

func hasApproval(list []wsApproval, id string) bool {
	for _, a := range list {
		if a.ID == id {
			return true
		}
	}
	return false
}

// TestReplicasTokensAndSessions: a token made on one replica works on all
// within a second (each replica verifies from memory, refreshed by a
// notification), with its role; revoked on another, it stops working on
// the third as soon. A browser session signed in on one replica is known
// to the others.
func TestReplicasTokensAndSessions(t *testing.T) {
	rs := startReplicas(t, pgtest.Shared(t), 3, nil)
	evaluateWith := func(s *Server, token string) int {
		st, _, err := relDo(s, token, "POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": makeAll})
		if err != nil {
			t.Fatalf("evaluate: %v", err)
		}
		return st
	}
	made := time.Now()
	id, secret := createTokenID(t, rs.r[0], "agent-1", "agent")
	for i, s := range rs.r {
		WaitFor(t, 2*time.Second, fmt.Sprintf("replica %d to accept the token made on replica 0", i), func() bool {
			return evaluateWith(s, secret) == 200
		})
		t.Logf("replica %d accepts the new token %v after it was made", i, time.Since(made))
		st, body, err := relDo(s, secret, "POST", "/api/v1/permissions/rules",
			map[string]any{"id": fmt.Sprintf("agent_%d", i), "tools": []string{"bash"}, "pattern": "x", "action": "allow"})
		if err != nil || st != 403 {
			t.Errorf("replica %d: agent token writes a rule: %d %s %v, want 403", i, st, body, err)
		}
	}
	revoked := time.Now()
	st, _, body := rs.r[1].Call(rs.r[1].Token, "DELETE", "/api/v1/tokens/"+id, nil, nil)
	wantStatus(t, "revoke through replica 1", st, body, 204, "")
	for i, s := range rs.r {
		WaitFor(t, 2*time.Second, fmt.Sprintf("the token revoked on replica 1 to stop working on replica %d", i), func() bool {
			return evaluateWith(s, secret) == 401
		})
		t.Logf("replica %d refuses the revoked token %v after the revocation", i, time.Since(revoked))
	}

	web := signIn(t, rs.r[0])
	for i, s := range rs.r[1:] {
		c := cookieOn(t, web, s)
		st, page := c.get("/tools")
		if st != 200 || strings.Contains(page, `data-testid="login-form"`) {
			t.Errorf("replica %d: the session signed in on replica 0 is not known (status %d, login form shown: %v)", i+1, st, strings.Contains(page, "login-form"))
		}
	}

	// Signed out through replica 1 (a form with its CSRF token), the
	// session is gone on every replica.
	out := cookieOn(t, web, rs.r[1])
	_, page := out.get("/tools")
	if st, _ := out.post("/logout", url.Values{"csrf_token": {fields(page)["csrf_token"]}}, rs.r[1].URL); st != 200 {
		t.Fatalf("sign out through replica 1: status %d", st)
	}
	for i, s := range rs.r {
		c := cookieOn(t, web, s)
		WaitFor(t, 2*time.Second, fmt.Sprintf("replica %d to forget the session signed out on replica 1", i), func() bool {
			_, page := c.get("/tools")
			return strings.Contains(page, `data-testid="login-form"`)
		})
	}
}

// TestReplicasDecisionLog: decisions made on every replica read back
// through any one of them.
func TestReplicasDecisionLog(t *testing.T) {
	rs := startReplicas(t, pgtest.Shared(t), 3, nil)
	for i, s := range rs.r {
		relLevel(t, s, "bash", map[string]any{"command": fmt.Sprintf("ls from-replica-%d", i)})
	}
	for i, s := range rs.r {
		WaitFor(t, 10*time.Second, fmt.Sprintf("replica %d to list the decisions of all three", i), func() bool {
			_, body, err := relDo(s, s.Token, "GET", "/api/v1/decisions?limit=500", nil)
			if err != nil {
				return false
			}
			for j := range rs.r {
				if !strings.Contains(string(body), fmt.Sprintf("from-replica-%d", j)) {
					return false
				}
			}
			return true
		})
	}
}

// TestReplicasKillDuringWriteStorm: writers create rules through all three
// replicas while one is SIGKILLed at a random moment; every acknowledged
// rule, whichever replica acknowledged it, is served by every replica
// afterwards (the killed one restarted), and the others answered no 5xx.
func TestReplicasKillDuringWriteStorm(t *testing.T) {
	rs := startReplicas(t, pgtest.Shared(t), 3, nil)
	victim := rs.r[2] // started with --database-url, which a restart keeps
	for round := range 2 {
		var mu sync.Mutex
		acked := map[string]int{}
		statuses := map[int]int{}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := range 6 {
			s := rs.r[w%3]
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					id := fmt.Sprintf("storm_r%d_w%d_%d", round, w, i)
					st, body, err := addRule(s, id, "echo "+id)
					mu.Lock()
					statuses[st]++
					mu.Unlock()
					switch {
					case err != nil && s == victim:
						return // killed
					case err != nil:
						t.Errorf("round %d: create %s through replica %d: %v", round, id, w%3, err)
						return
					case st == 201:
						mu.Lock()
						acked[id] = w % 3
						mu.Unlock()
					case st >= 500 && s != victim:
						t.Errorf("round %d: create %s through replica %d: %d %s", round, id, w%3, st, body)
					}
				}
			}()
		}
		WaitFor(t, 30*time.Second, "the first acknowledged writes", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(acked) >= 20
		})
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		victim.Kill()
		time.Sleep(200 * time.Millisecond) // the others keep writing
		close(stop)
		wg.Wait()
		victim.start()
		for i, s := range rs.r {
			// A write acknowledged by one replica just before the storm
			// ended reaches the others' memory by notification: give that
			// the contract's second (and some), then everything must be
			// there.
			var ids map[string]bool
			deadline := time.Now().Add(3 * time.Second)
			for {
				ids = ruleIDs(t, s)
				if hasAll(ids, acked) || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			missing := 0
			for id, by := range acked {
				if !ids[id] {
					missing++
					if missing <= 5 {
						t.Errorf("round %d: rule %s acknowledged by replica %d is missing on replica %d", round, id, by, i)
					}
				}
			}
			if missing > 5 {
				t.Errorf("round %d: replica %d misses %d acknowledged rules in all", round, i, missing)
			}
		}
		if got := relLevel(t, victim, "read_file", map[string]any{"path": "a.txt"}); got != "deny" {
			t.Errorf("round %d: restarted replica decides read_file %s, want deny", round, got)
		}
		t.Logf("round %d: %d acknowledged writes through 3 replicas, all present on all (statuses %v)", round, len(acked), statuses)
	}
}

// hasAll reports whether ids holds every key of want.
func hasAll(ids map[string]bool, want map[string]int) bool {
	for id := range want {
		if !ids[id] {
			return false
		}
	}
	return true
}

// TestReplicasDatabaseRestart: the database stopped: every replica keeps
// deciding with the policy in force, new asks are denied saying why,
// writes answer 503 and /readyz fails; started again: all recover by
// themselves, edits fan out and asks cross replicas again.
func TestReplicasDatabaseRestart(t *testing.T) {
	pg := pgtest.Start(t) // its own cluster: this test stops it
	rs := startReplicas(t, pg, 3, nil)
	tok := rs.r[0].Token
	ws1, _ := connectWS(t, rs.r[1], tok) // connected across the outage

	if err := pg.Stop(); err != nil {
		t.Fatalf("stop PostgreSQL: %v", err)
	}
	for i, s := range rs.r {
		wantFailsClosed(t, fmt.Sprintf("replica %d, database stopped", i), s)
	}

	if err := pg.Start(); err != nil {
		t.Fatalf("start PostgreSQL again: %v", err)
	}
	for i, s := range rs.r {
		WaitFor(t, 30*time.Second, fmt.Sprintf("replica %d ready again", i), func() bool { st, _ := ready(s); return st == 200 })
	}
	st, body, err := addRule(rs.r[2], "make_ok", "make *")
	if err != nil || st != 201 {
		t.Fatalf("write through replica 2 after the restart: %d %s %v", st, body, err)
	}
	waitLevelOnAll(t, rs.r, time.Now(), 5*time.Second, "bash", makeAll, "allow")
	res := checkAsync(rs.r[0], tok, askBody("git push", "cli", "s-after", 30))
	id := ws1.next("approval.requested", "", 10*time.Second).Approval.ID
	st, body = decide(t, rs.r[2], tok, id, "deny")
	wantStatus(t, "answer through replica 2 after the restart", st, body, 200, "")
	if got := answered(t, res, 10*time.Second); got.Decision != "deny" {
		t.Errorf("check on replica 0 after the restart: %q, want deny", got.Decision)
	}
}

// wantFailsClosed checks a replica that cannot reach the database: it
// decides with the policy in force, answers a new ask with deny and a
// reason naming the database, refuses writes with 503, and /readyz fails.
func wantFailsClosed(t *testing.T, what string, s *Server) {
	t.Helper()
	WaitFor(t, 30*time.Second, what+": /readyz to fail", func() bool {
		st, _ := ready(s)
		return st != 200 && st != 0
	})
	_, why := ready(s)
	t.Logf("%s: /readyz says %s", what, strings.TrimSpace(why))
	if got := relLevel(t, s, "read_file", map[string]any{"path": "a.txt"}); got != "deny" {
		t.Errorf("%s: read_file = %s, want deny (the policy in force)", what, got)
	}
	if got := relLevel(t, s, "bash", map[string]any{"command": "ls -l"}); got != "allow" {
		t.Errorf("%s: ls -l = %s, want allow (the policy in force)", what, got)
	}
	began := time.Now()
	st, body, err := relDo(s, s.Token, "POST", "/api/v1/check", askBody("make install", "cli", "s-cut", 5))
	if err != nil || st != 200 {
		t.Errorf("%s: check of an ask: %d %s %v, want 200 deny", what, st, body, err)
	} else {
		a := DecodeJSON[struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		}](t, body)
		if a.Decision != "deny" || !saysUnavailable(a.Reason) {
			t.Errorf("%s: check of an ask: decision %q reason %q, want deny with a reason saying the approvals (database) cannot be reached", what, a.Decision, a.Reason)
		}
		t.Logf("%s: the ask is denied: %q", what, a.Reason)
	}
	t.Logf("%s: the ask was answered after %v", what, time.Since(began))
	st, body, err = addRule(s, "cut_write", "cmake *")
	if err != nil || st != 503 {
		t.Errorf("%s: write: %d %s %v, want 503", what, st, body, err)
	}
}

// saysUnavailable reports whether a deny reason says why: the database or
// the approval service behind it cannot be reached.
func saysUnavailable(reason string) bool {
	r := strings.ToLower(reason)
	for _, w := range []string{"database", "unavailable", "unreachable", "cannot be reached"} {
		if strings.Contains(r, w) {
			return true
		}
	}
	return false
}

// TestReplicasCutOffFailsClosed: replica 1 reaches PostgreSQL through a
// proxy the test cuts (refused, then silent), while replica 0 keeps the
// database. Cut off, replica 1 fails closed (wantFailsClosed) and replica
// 0 works on; replica 0 edits the policy meanwhile. When the link comes
// back, replica 1 recovers by itself, decides with the edit it missed, and
// its writes and asks reach replica 0 again.
func TestReplicasCutOffFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		note string
		mode proxyMode
	}{
		{"refused", proxyRefuse},
		{"silent", proxySilence},
	} {
		t.Run(tc.note, func(t *testing.T) {
			pg := pgtest.Shared(t)
			proxy := startDBProxy(t, "127.0.0.1:"+fmt.Sprint(pg.Port))
			rs := startReplicas(t, pg, 2, func(i int, dsn string) string {
				if i == 1 {
					return proxy.proxiedDSN(dsn)
				}
				return dsn
			})
			cut, ok := rs.r[1], rs.r[0]
			tok := ok.Token
			wsOK, _ := connectWS(t, ok, tok)

			proxy.Cut(tc.mode)
			wantFailsClosed(t, "cut-off replica", cut)
			if st, why := ready(ok); st != 200 {
				t.Errorf("replica with the database: /readyz %d %s, want 200", st, why)
			}
			st, body, err := addRule(ok, "make_ok", "make *")
			if err != nil || st != 201 {
				t.Fatalf("write through the replica with the database: %d %s %v", st, body, err)
			}

			proxy.Restore()
			WaitFor(t, 30*time.Second, "the cut-off replica ready again", func() bool { st, _ := ready(cut); return st == 200 })
			waitLevelOnAll(t, []*Server{cut}, time.Now(), 5*time.Second, "bash", makeAll, "allow")
			st, body, err = addRule(cut, "cmake_ok", "cmake *")
			if err != nil || st != 201 {
				t.Fatalf("write through the recovered replica: %d %s %v", st, body, err)
			}
			waitLevelOnAll(t, []*Server{ok}, time.Now(), 5*time.Second, "bash", map[string]any{"command": "cmake ."}, "allow")
			res := checkAsync(cut, tok, askBody("git push", "cli", "s-back", 30))
			id := wsOK.next("approval.requested", "", 10*time.Second).Approval.ID
			st, body = decide(t, ok, tok, id, "allow_once")
			wantStatus(t, "answer through replica 0", st, body, 200, "")
			if got := answered(t, res, 10*time.Second); got.Decision != "allow" {
				t.Errorf("check on the recovered replica: %q, want allow", got.Decision)
			}
		})
	}
}

// TestReplicasMissedAnswerResyncs: an ask opened through replica 1 is
// answered through replica 0 while replica 1 is cut off from the database,
// so replica 1 misses the notification. When the link comes back, replica
// 1 learns the answer from the tables: the /check waiting on it gets the
// answer (or, if it gave up during the cut, a deny saying why), and its
// browsers' websocket gets approval.resolved, so no stale pending card
// stays on screen.
func TestReplicasMissedAnswerResyncs(t *testing.T) {
	pg := pgtest.Shared(t)
	proxy := startDBProxy(t, "127.0.0.1:"+fmt.Sprint(pg.Port))
	rs := startReplicas(t, pg, 2, func(i int, dsn string) string {
		if i == 1 {
			return proxy.proxiedDSN(dsn)
		}
		return dsn
	})
	cut, ok := rs.r[1], rs.r[0]
	tok := ok.Token
	wsOK, _ := connectWS(t, ok, tok)
	wsCut, _ := connectWS(t, cut, tok)

	res := checkAsync(cut, tok, askBody("git fetch", "cli", "s-missed", 120))
	id := wsOK.next("approval.requested", "", 10*time.Second).Approval.ID
	wsCut.next("approval.requested", id, 10*time.Second)

	proxy.Cut(proxyRefuse)
	WaitFor(t, 30*time.Second, "the cut-off replica to notice", func() bool {
		st, _ := ready(cut)
		return st != 200 && st != 0
	})
	st, body := decide(t, ok, tok, id, "allow_once")
	wantStatus(t, "answer through replica 0 during the cut", st, body, 200, "")
	time.Sleep(300 * time.Millisecond) // the notification goes out, to nobody on replica 1

	restored := time.Now()
	proxy.Restore()
	resolved, got := wsCut.await("approval.resolved", id, 30*time.Second)
	if !got {
		t.Errorf("replica 1's websocket got no approval.resolved for %s after the link came back", id)
	} else {
		t.Logf("replica 1 pushed the missed answer %v after the restore", resolved.At.Sub(restored))
	}
	select {
	case r := <-res:
		if r.err != nil || r.status != 200 {
			t.Fatalf("check waiting on replica 1: %d %s %v", r.status, r.body, r.err)
		}
		a := DecodeJSON[struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		}](t, r.body)
		switch {
		case a.Decision == "allow":
			t.Logf("the check waiting on replica 1 got the answer given during the cut")
		case a.Decision == "deny" && saysUnavailable(a.Reason):
			t.Logf("the check gave up during the cut, failing closed: %q", a.Reason)
		default:
			t.Errorf("check waiting on replica 1: decision %q reason %q, want the answer given on replica 0 (allow) or a deny saying why", a.Decision, a.Reason)
		}
	case <-time.After(30 * time.Second):
		t.Error("the check waiting on replica 1 did not answer within 30 s after the link came back")
	}
	st, body, err := relDo(cut, tok, "GET", "/api/v1/approvals/"+id, nil)
	if a := DecodeJSON[wsApproval](t, body); err != nil || st != 200 || a.Status == "pending" {
		t.Errorf("GET the approval through replica 1 after the restore: %d %s %v, want it answered", st, body, err)
	}
}

// TestReplicasStartTogether: three replicas started at the same moment on
// an empty database, each with the same config.yaml, as an orchestrator
// starts them: every one comes up (the schema is made once, under its
// lock), one config.yaml is imported whole, exactly one of them writes the
// first admin token, and that token works on all three.
func TestReplicasStartTogether(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	type proc struct {
		dir, url string
		out      *syncBuffer
		exited   chan struct{}
	}
	var ps []*proc
	for i := range 3 {
		p := &proc{dir: t.TempDir(), out: &syncBuffer{}, exited: make(chan struct{})}
		// Each config.yaml has its own extra rule: the one imported shows.
		writeFile(t, filepath.Join(p.dir, "config.yaml"), replicaConfig+
			fmt.Sprintf("    - {id: from_%d, tools: [bash], pattern: \"echo %d\", action: allow}\n", i, i))
		addr := freeAddr(t)
		p.url = "http://" + addr
		cmd := exec.Command(binary, "--addr", addr, "--config-dir", p.dir, "--workspace", t.TempDir(), "--database-url", dsn)
		cmd.Stdout, cmd.Stderr = p.out, p.out
		ps = append(ps, p)
		// Each Start takes a millisecond or so: the three start together,
		// well within one another's schema migration and import.
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = cmd.Wait(); close(p.exited) }()
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-p.exited
			}
		})
	}
	for i, p := range ps {
		WaitFor(t, 30*time.Second, fmt.Sprintf("replica %d healthy", i), func() bool {
			select {
			case <-p.exited:
				t.Fatalf("replica %d exited at start:\n%s", i, p.out.String())
			default:
			}
			resp, err := http.Get(p.url + "/healthz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		})
	}
	var token string
	writers := 0
	for _, p := range ps {
		if data, err := os.ReadFile(filepath.Join(p.dir, "api_token")); err == nil {
			writers++
			token = strings.TrimSpace(string(data))
		}
	}
	if writers != 1 {
		t.Fatalf("%d replicas wrote api_token, want exactly 1 (one admin token per database)", writers)
	}
	for i, p := range ps {
		s := &Server{t: t, URL: p.url, Token: token}
		if got := relLevel(t, s, "read_file", map[string]any{"path": "a.txt"}); got != "deny" {
			t.Errorf("replica %d: read_file = %s, want deny (the imported policy)", i, got)
		}
	}
	// One config.yaml was imported, whole, and every replica serves it.
	var first map[string]bool
	for i, p := range ps {
		ids := ruleIDs(t, &Server{t: t, URL: p.url, Token: token})
		from := 0
		for id := range ids {
			if strings.HasPrefix(id, "from_") {
				from++
			}
		}
		if len(ids) != 2 || !ids["ls_ok"] || from != 1 {
			t.Errorf("replica %d: rules after three starts at once: %v, want ls_ok and one from_N (one config.yaml imported)", i, ids)
		}
		if i == 0 {
			first = ids
		} else if fmt.Sprint(ids) != fmt.Sprint(first) {
			t.Errorf("replica %d serves rules %v, replica 0 serves %v", i, ids, first)
		}
	}
}
