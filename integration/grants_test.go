package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// grantWire is what the tests read of a grant on the wire.
type grantWire struct {
	ID        string    `json:"id"`
	ToolName  string    `json:"tool_name"`
	Scope     string    `json:"scope"`
	Pattern   string    `json:"pattern"`
	SessionID string    `json:"session_id"`
	GrantedBy string    `json:"granted_by"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// grantsWorkspace is the workspace every call of these tests names: a
// grant holds in the workspace of the call that was approved, and each
// test server has a --workspace of its own.
const grantsWorkspace = "/srv/team-ws"

// askOver opens an ask through s's /check (wait 0) and returns its id.
func askOver(t *testing.T, s *Server, command, session string) string {
	t.Helper()
	body := map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": command}, "channel_id": "web",
		"workspace": grantsWorkspace, "wait_seconds": 0}
	if session != "" {
		body["session_id"] = session
	}
	st, raw := s.Do("POST", "/api/v1/check", body)
	var out checkAnswer
	if st != 200 || json.Unmarshal(raw, &out) != nil || out.Decision != "pending" || out.Approval == nil {
		t.Fatalf("check %q in %q: %d %s", command, session, st, raw)
	}
	return out.Approval.ID
}

// checkDecision is what s's /check answers at once for command in session.
func checkDecision(t *testing.T, s *Server, command, session string) (string, string) {
	t.Helper()
	st, raw := s.Do("POST", "/api/v1/check", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": command},
		"channel_id": "web", "workspace": grantsWorkspace, "session_id": session, "wait_seconds": 0})
	var out struct {
		Decision    string `json:"decision"`
		MatchedRule string `json:"matched_rule"`
	}
	if st != 200 || json.Unmarshal(raw, &out) != nil {
		t.Fatalf("check %q in %q: %d %s", command, session, st, raw)
	}
	return out.Decision, out.MatchedRule
}

// TestGrantsAcrossReplicas runs two server binaries on one PostgreSQL
// database. An allow_for answered over JSON-RPC through replica 2 to an
// ask opened on replica 1 allows the call on both, in any session, and
// stops on both at its expiry, to the second, with no reload. An
// allow_session answered over REST holds in its session only, on both,
// and a DELETE through either replica stops it on the other within a
// second. Bad answers are 400s naming their field and leave the ask
// pending.
func TestGrantsAcrossReplicas(t *testing.T) {
	rs := startReplicas(t, pgtest.Shared(t), 2, nil)
	one, two := rs.r[0], rs.r[1]

	id := askOver(t, one, "make all", "s1")
	for _, c := range []struct {
		note  string
		body  map[string]any
		field string
	}{
		{"allow_for without ttl_seconds", map[string]any{"choice": "allow_for"}, "ttl_seconds"},
		{"a ttl over 30 days", map[string]any{"choice": "allow_for", "ttl_seconds": 2592001}, "ttl_seconds"},
		{"a ttl with allow_once", map[string]any{"choice": "allow_once", "ttl_seconds": 60}, "ttl_seconds"},
		{"a choice that does not exist", map[string]any{"choice": "allow_forever"}, "choice"},
	} {
		st, raw := two.Do("POST", "/api/v1/approvals/"+id+"/decision", c.body)
		wantStatus(t, c.note, st, raw, 400, c.field)
	}
	noSession := askOver(t, one, "make nosession", "")
	st, raw := two.Do("POST", "/api/v1/approvals/"+noSession+"/decision", map[string]any{"choice": "allow_session"})
	wantStatus(t, "allow_session for an ask without a session", st, raw, 400, "choice")

	// allow_for over JSON-RPC through replica 2.
	st, raw = two.Do("POST", "/rpc", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "approvals.decide",
		"params": map[string]any{"id": id, "choice": "allow_for", "ttl_seconds": 3}})
	var rpc struct {
		Result struct {
			Decision string    `json:"decision"`
			Grant    grantWire `json:"grant"`
		} `json:"result"`
	}
	if st != 200 || json.Unmarshal(raw, &rpc) != nil || rpc.Result.Decision != "allow" || rpc.Result.Grant.Scope != "timed" {
		t.Fatalf("approvals.decide: %d %s", st, raw)
	}
	g := rpc.Result.Grant
	if g.Pattern != "make all" || g.GrantedBy == "" || g.ExpiresAt.Sub(g.CreatedAt) != 3*time.Second {
		t.Errorf("the grant: %+v", g)
	}
	for i, s := range rs.r {
		WaitFor(t, time.Second, "replica "+string(rune('1'+i))+" allows by the grant", func() bool {
			d, rule := checkDecision(t, s, "make all", "another-session")
			return d == "allow" && strings.Contains(rule, "grants["+g.ID+"]")
		})
	}
	st, raw = one.Do("GET", "/api/v1/grants?tool_name=bash", nil)
	var list struct {
		Grants []grantWire `json:"grants"`
	}
	if st != 200 || json.Unmarshal(raw, &list) != nil || len(list.Grants) != 1 || list.Grants[0].ID != g.ID {
		t.Errorf("GET /api/v1/grants on replica 1: %d %s", st, raw)
	}
	// Expiry: allowed until a moment before, asked from a moment after, on
	// both replicas.
	time.Sleep(time.Until(g.ExpiresAt.Add(-700 * time.Millisecond)))
	for i, s := range rs.r {
		if d, _ := checkDecision(t, s, "make all", "s9"); d != "allow" && time.Now().Before(g.ExpiresAt) {
			t.Errorf("replica %d before the expiry: %s", i+1, d)
		}
	}
	time.Sleep(time.Until(g.ExpiresAt.Add(100 * time.Millisecond)))
	for i, s := range rs.r {
		if d, _ := checkDecision(t, s, "make all", "s9"); d != "pending" {
			t.Errorf("replica %d 100 ms after the expiry: %s, want pending (asked)", i+1, d)
		}
	}

	// allow_session over REST through replica 1, to an ask of replica 2.
	id = askOver(t, two, "make test", "s2")
	st, raw = one.Do("POST", "/api/v1/approvals/"+id+"/decision", map[string]any{"choice": "allow_session"})
	var answered struct {
		Grant grantWire `json:"grant"`
	}
	if st != 200 || json.Unmarshal(raw, &answered) != nil || answered.Grant.Scope != "session" || answered.Grant.SessionID != "s2" {
		t.Fatalf("allow_session: %d %s", st, raw)
	}
	for i, s := range rs.r {
		WaitFor(t, time.Second, "replica "+string(rune('1'+i))+" allows in s2", func() bool {
			d, _ := checkDecision(t, s, "make test", "s2")
			return d == "allow"
		})
		if d, _ := checkDecision(t, s, "make test", "s3"); d != "pending" {
			t.Errorf("replica %d in another session: %s", i+1, d)
		}
	}
	st, raw = two.Do("DELETE", "/api/v1/grants/"+answered.Grant.ID, nil)
	if st != 200 {
		t.Fatalf("DELETE through replica 2: %d %s", st, raw)
	}
	WaitFor(t, time.Second, "replica 1 stops after the revoke through replica 2", func() bool {
		d, _ := checkDecision(t, one, "make test", "s2")
		return d == "pending"
	})
	st, raw = one.Do("DELETE", "/api/v1/grants/"+answered.Grant.ID, nil)
	wantStatus(t, "a second DELETE", st, raw, 404, "")
}
