package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// inputConfig allows bash so that a huge command is decided by the rules,
// and has a pathological regex rule.
const inputConfig = `permissions:
  enabled: true
  schema: tiered_policy
  defaults: {"*": ask}
  tools:
    bash: allow
    read_file: allow
  rules:
    - {id: patho, tools: [bash], pattern: 're:(a+)+$', action: deny}
    - {id: patho2, tools: [bash], pattern: 're:(x+x+)+y', action: deny}
`

// errorCode decodes the error body; empty when it is not one.
func errorCode(body []byte) string {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		return ""
	}
	return e.Error.Code
}

// TestInputHostileBodies: oversized, deeply nested, invalid UTF-8 and
// otherwise malformed bodies get a clean 4xx error body, and the server
// keeps deciding.
func TestInputHostileBodies(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: inputConfig})
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	cases := []struct {
		note   string
		path   string
		body   string
		status int
	}{
		{"oversized evaluate (2 MiB)", "/api/v1/evaluate", `{"tool_name":"bash","tool_args":{"command":"` + strings.Repeat("a", 2<<20) + `"}}`, 413},
		{"oversized evaluate (16 MiB)", "/api/v1/evaluate", `{"tool_name":"bash","tool_args":{"command":"` + strings.Repeat("a", 16<<20) + `"}}`, 413},
		{"deep JSON as tool_args", "/api/v1/evaluate", `{"tool_name":"bash","tool_args":{"x":` + deep + `}}`, 400},
		{"deep JSON as the body", "/api/v1/evaluate", deep, 400},
		{"deep objects", "/api/v1/evaluate", `{"tool_name":"bash","tool_args":` + strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000) + `}`, 400},
		// Not UTF-8, so not JSON (RFC 8259 8.1): refused rather than decided
		// on a repaired string the caller never sent.
		{"invalid UTF-8 in a string", "/api/v1/evaluate", "{\"tool_name\":\"bash\",\"tool_args\":{\"command\":\"ls \xff\xfe\xc3\"}}", 400},
		{"invalid UTF-8 as a key", "/api/v1/evaluate", "{\"tool_name\":\"bash\",\"tool_args\":{\"\xff\":\"/etc/passwd\"}}", 400},
		{"NUL bytes", "/api/v1/evaluate", `{"tool_name":"bash","tool_args":{"command":"ls \u0000; rm -rf /"}}`, 200},
		{"two JSON values", "/api/v1/evaluate", `{"tool_name":"bash"}{"tool_name":"bash"}`, 400},
		{"number overflow", "/api/v1/evaluate", `{"tool_name":"bash","tool_args":{"n":1e999999}}`, 400},
		{"not JSON at all", "/api/v1/evaluate", "\x00\x01\x02", 400},
		{"empty body", "/api/v1/evaluate", "", 400},
		{"oversized rule", "/api/v1/permissions/rules", `{"id":"big","tools":["bash"],"pattern":"` + strings.Repeat("a", 2<<20) + `","action":"allow"}`, 413},
		{"deep JSON rule", "/api/v1/permissions/rules", `{"id":"deep","tools":["bash"],"pattern":"x","action":"allow","x":` + deep + `}`, 400},
		{"oversized JSON-RPC", "/rpc", `{"jsonrpc":"2.0","id":1,"method":"permissions.get","params":"` + strings.Repeat("a", 2<<20) + `"}`, 413},
		{"deep JSON-RPC", "/rpc", `{"jsonrpc":"2.0","id":1,"method":"permissions.get","params":` + deep + `}`, 0},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			st, body, err := relDo(s, s.Token, "POST", c.path, c.body)
			if err != nil {
				t.Fatalf("transport error (server crashed?): %v", err)
			}
			short := string(body)
			if len(short) > 300 {
				short = short[:300]
			}
			switch {
			case c.status == 0: // JSON-RPC answers errors with 200 and an error object
				if st >= 500 || !strings.Contains(short, "error") {
					t.Errorf("got %d %s, want a JSON-RPC error", st, short)
				}
			case st != c.status:
				t.Errorf("status: got %d, want %d (%s)", st, c.status, short)
			case st >= 400 && errorCode(body) == "":
				t.Errorf("no error body: %s", short)
			case st == 200 && !strings.Contains(short, `"level"`):
				t.Errorf("no decision: %s", short)
			}
		})
	}
	if got := relLevel(t, s, "bash", map[string]any{"command": "ls"}); got != "allow" {
		t.Fatalf("after hostile bodies: %s", got)
	}
}

// TestInputHugeCommand: a command of 1 MiB minus a bit (just under the
// body cap) is decided, not allowed, and the server stays up.
func TestInputHugeCommand(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: inputConfig})
	for _, c := range []struct {
		note, cmd string
	}{
		{"chain at the end", "ls " + strings.Repeat("b", 1<<20-200) + "; rm -rf /"},
		{"chain at the start", "ls; rm -rf / " + strings.Repeat("b", 1<<20-200)},
		{"many simple commands", strings.Repeat("ls b; ", (1<<20-200)/6) + "rm -rf /"},
	} {
		t.Run(c.note, func(t *testing.T) {
			start := time.Now()
			st, body, err := relDo(s, s.Token, "POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": c.cmd}})
			if err != nil || st != 200 {
				t.Fatalf("got %d %.300s %v", st, body, err)
			}
			level := DecodeJSON[struct {
				Level string `json:"level"`
			}](t, body).Level
			t.Logf("%d-byte command: %s in %v", len(c.cmd), level, time.Since(start))
			if level == "allow" {
				t.Errorf("a huge chained command is allowed")
			}
		})
	}
}

// TestInputPathologicalRegex: RE2 is linear, so a 100 KiB input against
// `re:(a+)+$` and `re:(x+x+)+y` is decided fast (the bound is generous: it
// catches backtracking, which would take years, not a slow machine).
func TestInputPathologicalRegex(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: inputConfig})
	for _, c := range []struct {
		note, cmd, want string
	}{
		{"(a+)+$ matching", "echo " + strings.Repeat("a", 100<<10), "deny"},
		{"(a+)+$ failing at the end", "echo " + strings.Repeat("a", 100<<10) + "b", "allow"},
		{"(x+x+)+y failing", "echo " + strings.Repeat("x", 100<<10), "allow"},
	} {
		t.Run(c.note, func(t *testing.T) {
			start := time.Now()
			got := relLevel(t, s, "bash", map[string]any{"command": c.cmd})
			took := time.Since(start)
			t.Logf("%s: %s in %v", c.note, got, took)
			if got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
			if took > 10*time.Second {
				t.Errorf("took %v: a regex backtracks", took)
			}
		})
	}
}

// TestInputManyRules: 100,000 rules in one PUT /api/v1/permissions are over
// the 1 MiB body cap and get a clean 413; 5,000 rules (under the cap) are
// accepted and the server keeps deciding with them.
func TestInputManyRules(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: inputConfig})
	section := func(n int) map[string]any {
		rules := make([]any, n)
		for i := range rules {
			rules[i] = map[string]any{"id": fmt.Sprintf("r%d", i), "tools": []string{"bash"}, "pattern": fmt.Sprintf("tool%d *", i), "action": "allow"}
		}
		return map[string]any{"enabled": true, "schema": "tiered_policy", "defaults": map[string]any{"*": "ask"},
			"tools": map[string]any{"bash": "ask"}, "rules": rules}
	}
	st, body, err := relDo(s, s.Token, "PUT", "/api/v1/permissions", section(100000))
	if err != nil {
		t.Fatalf("100,000 rules: %v", err)
	}
	if st != 413 || errorCode(body) == "" {
		t.Errorf("100,000 rules: got %d %.300s, want a clean 413", st, body)
	}
	n := bySoak(5000, 12000)
	start := time.Now()
	st, body, err = relDo(s, s.Token, "PUT", "/api/v1/permissions", section(n))
	if err != nil || st != 200 {
		t.Fatalf("%d rules: %d %.300s %v", n, st, body, err)
	}
	t.Logf("%d rules written in %v", n, time.Since(start))
	WaitFor(t, 10*time.Second, "the rules in force", func() bool {
		return relLevel(t, s, "bash", map[string]any{"command": fmt.Sprintf("tool%d x", n-1)}) == "allow"
	})
	if got := relLevel(t, s, "bash", map[string]any{"command": "make"}); got != "ask" {
		t.Errorf("with %d rules: make %s, want ask", n, got)
	}
}
