package integration

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// decisionsConfig asks for git push and allows ls and git status.
const decisionsConfig = `permissions:
  enabled: true
  schema: tiered_policy
  defaults: {"*": ask}
  tools:
    bash: ask
    read_file: allow
  rules:
    - {id: ls_ok, tools: [bash], pattern: "ls *", action: allow}
    - {id: git_ok, tools: [bash], pattern: "git *", action: allow}
`

type decisionWire struct {
	ID          int64   `json:"id"`
	Source      string  `json:"source"`
	ToolName    string  `json:"tool_name"`
	Summary     string  `json:"summary"`
	ChannelID   string  `json:"channel_id"`
	Level       string  `json:"level"`
	MatchedRule *string `json:"matched_rule"`
}

type decisionPage struct {
	Decisions  []decisionWire `json:"decisions"`
	NextCursor string         `json:"next_cursor"`
}

func evaluate(t *testing.T, s *Server, tool string, args map[string]any) map[string]any {
	t.Helper()
	status, body := s.Do("POST", "/api/v1/evaluate", map[string]any{"tool_name": tool, "tool_args": args, "channel_id": "cli"})
	if status != 200 {
		t.Fatalf("evaluate %s %v: status %d: %s", tool, args, status, body)
	}
	return DecodeJSON[map[string]any](t, body)
}

// listDecisions fetches a page of the log.
func listDecisions(t *testing.T, s *Server, query string) decisionPage {
	t.Helper()
	status, body := s.Do("GET", "/api/v1/decisions"+query, nil)
	if status != 200 {
		t.Fatalf("GET /api/v1/decisions%s: status %d: %s", query, status, body)
	}
	return DecodeJSON[decisionPage](t, body)
}

// waitLogged waits until the log holds n entries.
func waitLogged(t *testing.T, s *Server, n int) decisionPage {
	t.Helper()
	var page decisionPage
	WaitFor(t, 10*time.Second, fmt.Sprintf("%d logged decisions", n), func() bool {
		page = listDecisions(t, s, "?limit=500")
		return len(page.Decisions) >= n
	})
	return page
}

// TestDecisionLogRecordsAndMasks evaluates calls through the real route and
// reads them back: what was decided, with secrets masked.
func TestDecisionLogRecordsAndMasks(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: decisionsConfig})
	calls := []struct {
		cmd, wantSummary, secret string
	}{
		{`curl -H "Authorization: Bearer tok123secret" https://example.com`, `curl -H "Authorization: Bearer [REDACTED]" https://example.com`, "tok123secret"},
		{`mysql -u root -pSECRETpw db`, `mysql -u root -p[REDACTED] db`, "SECRETpw"},
		{`export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENG`, `export AWS_SECRET_ACCESS_KEY=[REDACTED]`, "wJalrXUtnFEMIK7MDENG"},
	}
	for _, c := range calls {
		evaluate(t, s, "bash", map[string]any{"command": c.cmd})
	}
	evaluate(t, s, "bash", map[string]any{"command": "ls -la"})
	page := waitLogged(t, s, 4)
	if len(page.Decisions) != 4 {
		t.Fatalf("logged %d decisions, want 4", len(page.Decisions))
	}
	newest := page.Decisions[0]
	if newest.Level != "allow" || newest.MatchedRule == nil || *newest.MatchedRule != "tiered_policy:rules:rules[ls_ok]" ||
		newest.ToolName != "bash" || newest.ChannelID != "cli" || newest.Source != "evaluate" || newest.Summary != "ls -la" {
		t.Errorf("newest entry: got %+v, want the allowed ls -la by ls_ok on cli", newest)
	}
	for i, c := range calls {
		e := page.Decisions[len(calls)-i]
		if e.Summary != c.wantSummary {
			t.Errorf("summary: got %q, want %q", e.Summary, c.wantSummary)
		}
		if e.Level != "ask" {
			t.Errorf("%q: level %q, want ask", c.cmd, e.Level)
		}
	}
	for _, name := range []string{"decisions.db", "decisions.db-wal"} {
		data := s.ReadFile(name)
		for _, c := range calls {
			if strings.Contains(data, c.secret) {
				t.Errorf("%s holds the secret %q", name, c.secret)
			}
		}
	}
	for _, c := range calls {
		if strings.Contains(s.Output(), c.secret) {
			t.Errorf("the server log holds the secret %q", c.secret)
		}
	}

	t.Run("filters", func(t *testing.T) {
		cases := []struct {
			note  string
			query url.Values
			want  int
		}{
			{"level", url.Values{"level": {"ask"}}, 3},
			{"rule substring", url.Values{"rule": {"ls_ok"}}, 1},
			{"tool", url.Values{"tool": {"read_file"}}, 0},
			{"since the future", url.Values{"since": {time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}}, 0},
			{"until the future", url.Values{"until": {time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}}, 4},
		}
		for _, c := range cases {
			if got := len(listDecisions(t, s, "?"+c.query.Encode()).Decisions); got != c.want {
				t.Errorf("%s: got %d decisions, want %d", c.note, got, c.want)
			}
		}
	})
	t.Run("paging with a cursor", func(t *testing.T) {
		first := listDecisions(t, s, "?limit=3")
		if len(first.Decisions) != 3 || first.NextCursor == "" {
			t.Fatalf("first page: %d entries, cursor %q; want 3 and a cursor", len(first.Decisions), first.NextCursor)
		}
		second := listDecisions(t, s, "?limit=3&cursor="+first.NextCursor)
		if len(second.Decisions) != 1 || second.NextCursor != "" || second.Decisions[0].ID >= first.Decisions[2].ID {
			t.Errorf("second page: got %+v, want the one oldest entry and no cursor", second)
		}
	})
	t.Run("bad input names the field", func(t *testing.T) {
		for _, q := range []struct{ query, field string }{
			{"?limit=501", "limit"}, {"?since=yesterday", "since"}, {"?level=maybe", "level"}, {"?cursor=x", "cursor"}, {"?colour=red", "colour"},
		} {
			status, body := s.Do("GET", "/api/v1/decisions"+q.query, nil)
			if status != 400 || !strings.Contains(string(body), `"field":"`+q.field+`"`) {
				t.Errorf("%s: status %d, body %s; want 400 naming %s", q.query, status, body, q.field)
			}
		}
	})
}

// TestDecisionLogRights: reading the log needs the read right, the preview
// is admin only.
func TestDecisionLogRights(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: decisionsConfig, Args: []string{"--log-full-args"}})
	newToken := func(role string) string {
		status, body := s.Do("POST", "/api/v1/tokens", map[string]any{"name": role + "-1", "role": role})
		if status != 201 {
			t.Fatalf("create a %s token: status %d: %s", role, status, body)
		}
		return DecodeJSON[map[string]any](t, body)["secret"].(string)
	}
	agent, approver := newToken("agent"), newToken("approver")
	if st, _ := s.DoToken(agent, "GET", "/api/v1/decisions", nil); st != 403 {
		t.Errorf("agent lists decisions: status %d, want 403", st)
	}
	if st, _ := s.DoToken(approver, "GET", "/api/v1/decisions", nil); st != 200 {
		t.Errorf("approver lists decisions: status %d, want 200", st)
	}
	if st, _ := s.DoToken(approver, "POST", "/api/v1/permissions/preview", map[string]any{"delete_rule": "ls_ok"}); st != 403 {
		t.Errorf("approver previews: status %d, want 403 (admin only)", st)
	}
	if st, _ := s.DoToken("", "GET", "/api/v1/decisions", nil); st != 401 {
		t.Errorf("no token: status %d, want 401", st)
	}
}

// TestDecisionLogOff: --decision-log=false writes nothing and says so.
func TestDecisionLogOff(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: decisionsConfig, Args: []string{"--decision-log=false"}})
	evaluate(t, s, "bash", map[string]any{"command": "ls"})
	if status, _ := s.Do("GET", "/api/v1/decisions", nil); status != 503 {
		t.Errorf("list with the log off: status %d, want 503", status)
	}
	if _, err := os.Stat(filepath.Join(s.ConfigDir, "decisions.db")); !os.IsNotExist(err) {
		t.Errorf("decisions.db exists with the log off (stat: %v)", err)
	}
}

type previewResult struct {
	Replayed int `json:"replayed"`
	Changed  []struct {
		DecisionID int64  `json:"decision_id"`
		ToolName   string `json:"tool_name"`
		Summary    string `json:"summary"`
		From       struct {
			Level       string  `json:"level"`
			MatchedRule *string `json:"matched_rule"`
		} `json:"from"`
		To struct {
			Level       string  `json:"level"`
			MatchedRule *string `json:"matched_rule"`
		} `json:"to"`
	} `json:"changed"`
}

// TestPreviewDenyGitPush logs pushes and other commands through the real
// evaluate route, then previews a rule that denies git push *: exactly the
// pushes flip.
func TestPreviewDenyGitPush(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: decisionsConfig, Args: []string{"--log-full-args"}})
	pushes := map[string]bool{"git push origin main": true, "git push --force origin dev": true, "git push": true}
	others := []string{"git status", "ls -la", "git pull origin main", "make build"}
	for cmd := range pushes {
		evaluate(t, s, "bash", map[string]any{"command": cmd})
	}
	for _, cmd := range others {
		evaluate(t, s, "bash", map[string]any{"command": cmd})
	}
	evaluate(t, s, "read_file", map[string]any{"path": "README.md"})
	total := len(pushes) + len(others) + 1
	waitLogged(t, s, total)

	rule := map[string]any{"id": "no_push", "tools": []string{"bash"}, "pattern": "git push *", "action": "deny"}
	for _, body := range []map[string]any{
		{"rule": rule},
		{"permissions": draftWithRule(rule)},
	} {
		status, raw := s.Do("POST", "/api/v1/permissions/preview", body)
		if status != 200 {
			t.Fatalf("preview: status %d: %s", status, raw)
		}
		got := DecodeJSON[previewResult](t, raw)
		if got.Replayed != total {
			t.Errorf("replayed %d, want %d", got.Replayed, total)
		}
		flipped := map[string]bool{}
		for _, c := range got.Changed {
			flipped[c.Summary] = true
			if c.From.Level == "deny" || c.To.Level != "deny" || c.To.MatchedRule == nil ||
				*c.To.MatchedRule != "tiered_policy:rules:deny:rules[no_push]" || c.ToolName != "bash" || c.DecisionID == 0 {
				t.Errorf("change of %q: got %+v, want a change to deny by no_push", c.Summary, c)
			}
		}
		if len(flipped) != len(pushes) || len(got.Changed) != len(pushes) {
			t.Errorf("changed %v, want exactly the pushes %v", flipped, pushes)
		}
		for p := range pushes {
			if !flipped[p] {
				t.Errorf("%q did not flip", p)
			}
		}
	}
	if !strings.Contains(s.ReadFile("config.yaml"), "git_ok") || strings.Contains(s.ReadFile("config.yaml"), "no_push") {
		t.Errorf("the preview changed config.yaml")
	}

	t.Run("delete a rule", func(t *testing.T) {
		status, raw := s.Do("POST", "/api/v1/permissions/preview", map[string]any{"delete_rule": "ls_ok", "limit": 100})
		if status != 200 {
			t.Fatalf("status %d: %s", status, raw)
		}
		got := DecodeJSON[previewResult](t, raw)
		if len(got.Changed) != 1 || got.Changed[0].Summary != "ls -la" || got.Changed[0].To.Level != "ask" {
			t.Errorf("deleting ls_ok: got %+v, want only ls -la to flip to ask", got.Changed)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		for _, c := range []struct {
			note   string
			body   map[string]any
			status int
		}{
			{"nothing given", map[string]any{}, 400},
			{"two given", map[string]any{"delete_rule": "ls_ok", "rule": rule}, 400},
			{"limit too large", map[string]any{"delete_rule": "ls_ok", "limit": 10001}, 400},
			{"rule without id", map[string]any{"rule": map[string]any{"tools": []string{"bash"}, "pattern": "x", "action": "deny"}}, 400},
			{"unknown rule", map[string]any{"delete_rule": "nope"}, 404},
		} {
			if status, raw := s.Do("POST", "/api/v1/permissions/preview", c.body); status != c.status {
				t.Errorf("%s: status %d (%s), want %d", c.note, status, raw, c.status)
			}
		}
	})
}

// draftWithRule is decisionsConfig's section with one more rule.
func draftWithRule(rule map[string]any) map[string]any {
	return map[string]any{
		"enabled": true, "schema": "tiered_policy", "defaults": map[string]any{"*": "ask"},
		"tools": map[string]any{"bash": "ask", "read_file": "allow"},
		"rules": []any{
			map[string]any{"id": "ls_ok", "tools": []string{"bash"}, "pattern": "ls *", "action": "allow"},
			map[string]any{"id": "git_ok", "tools": []string{"bash"}, "pattern": "git *", "action": "allow"},
			rule,
		},
	}
}

// TestDecisionsPage signs in as the admin and reads the log page: the
// rows, the filter and the SVG chart, with secrets masked.
func TestDecisionsPage(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: decisionsConfig})
	evaluate(t, s, "bash", map[string]any{"command": "ls -la"})
	evaluate(t, s, "bash", map[string]any{"command": "mysql -pTOPSECRET db"})
	waitLogged(t, s, 2)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	page := func(path string) string {
		resp, err := client.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	login := page("/login")
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(login)
	if m == nil {
		t.Fatalf("no csrf token on the login page")
	}
	req, _ := http.NewRequest("POST", s.URL+"/login", strings.NewReader(url.Values{"token": {s.Token}, "csrf_token": {m[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.URL)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	html := page("/decisions")
	for _, want := range []string{`data-testid="decision-chart"`, "<svg", `data-level="allow"`, `data-level="ask"`, "ls -la", "mysql -p[REDACTED] db", `href="/decisions"`} {
		if !strings.Contains(html, want) {
			t.Errorf("decisions page lacks %q", want)
		}
	}
	if strings.Contains(html, "TOPSECRET") {
		t.Errorf("decisions page shows the secret")
	}
	filtered := page("/decisions?level=allow")
	if !strings.Contains(filtered, "ls -la") || strings.Contains(filtered, "mysql -p") {
		t.Errorf("level=allow filter: page should show only ls -la")
	}
	if bad := page("/decisions?since=yesterday"); !strings.Contains(bad, "RFC 3339") {
		t.Errorf("a bad since is not explained on the page")
	}
}
