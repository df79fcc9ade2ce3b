package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestMCPRulesOverREST: rules naming mcp__SERVER__* and match_type: args
// are accepted by the real server and decide MCP calls (a deny args rule
// wins over an allow one); a bad MCP name or match type is a 400 naming the
// field, and nothing is written.
func TestMCPRulesOverREST(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	rules := []map[string]any{
		{"id": "db_select", "tools": []string{"mcp__db__*"}, "match_type": "args", "pattern": `{"sql":"select *"}`, "action": "allow"},
		{"id": "db_drop", "tools": []string{"mcp__db__*"}, "match_type": "args", "pattern": `re:(?i)\bdrop\s+table\b`, "action": "deny"},
		{"id": "fs_secrets", "tools": []string{"mcp__fs__*"}, "match_type": "path", "pattern": "**/secrets/**", "action": "deny"},
	}
	for _, r := range rules {
		if st, _, body := s.Call(s.Token, "POST", "/api/v1/permissions/rules", r, nil); st != 201 && st != 200 {
			t.Fatalf("add rule %s: %d %s", r["id"], st, body)
		}
	}
	bad := []struct {
		note  string
		rule  map[string]any
		field string
		words string
	}{
		{"a wildcard inside the tool part", map[string]any{"id": "b1", "tools": []string{"mcp__db__read_*"}, "pattern": "x", "action": "deny"}, "tools", "only a whole tool part *"},
		{"an MCP name without a tool", map[string]any{"id": "b2", "tools": []string{"mcp__db"}, "pattern": "x", "action": "deny"}, "tools", "mcp__SERVER__TOOL"},
		{"a wildcard server", map[string]any{"id": "b3", "tools": []string{"mcp__*__query"}, "pattern": "x", "action": "deny"}, "tools", "server name"},
		{"an unknown match type", map[string]any{"id": "b4", "tools": []string{"mcp__db__query"}, "pattern": "x", "action": "deny", "match_type": "json"}, "match_type", "command, path or args"},
	}
	for _, c := range bad {
		st, _, body := s.Call(s.Token, "POST", "/api/v1/permissions/rules", c.rule, nil)
		if st != 400 || !strings.Contains(string(body), c.field) || !strings.Contains(string(body), c.words) {
			t.Errorf("%s: %d %s; want 400 naming %s and saying %q", c.note, st, body, c.field, c.words)
		}
	}
	if _, _, body := s.Call(s.Token, "GET", "/api/v1/permissions/rules", nil, nil); strings.Contains(string(body), `"b1"`) || strings.Contains(string(body), `"b4"`) {
		t.Errorf("a refused rule was written: %s", body)
	}
	agent := createToken(t, s, "agent-runtime", "agent")
	cases := []struct {
		note, tool string
		args       map[string]any
		level      string
	}{
		{"an allowed query", "mcp__db__query", map[string]any{"sql": "select name from users"}, "allow"},
		{"a star is not in an allow glob's class", "mcp__db__query", map[string]any{"sql": "select * from users"}, "ask"},
		{"a deny args rule beats the allow", "mcp__db__query", map[string]any{"sql": "select 1; DROP TABLE users"}, "deny"},
		{"another member is not allowed", "mcp__db__query", map[string]any{"sql": "select 1", "db": "prod"}, "ask"},
		{"a server's path rule", "mcp__fs__read_text_file", map[string]any{"path": "/tmp/secrets/k"}, "deny"},
	}
	for _, c := range cases {
		st, _, body := s.Call(agent, "POST", "/api/v1/evaluate", map[string]any{"tool_name": c.tool, "tool_args": c.args, "channel_id": "web"}, nil)
		var got struct{ Level string }
		if st != 200 || json.Unmarshal(body, &got) != nil || got.Level != c.level {
			t.Errorf("%s: %d %s, want level %s", c.note, st, body, c.level)
		}
	}
}

// TestBrowserMCPCall: an MCP call's server, tool and arguments as a
// person sees them: the decision log (API and page) names the server, the
// approval card shows each argument readably with secrets masked, and the
// rule form's tool list offers the MCP tools seen with their server.
func TestBrowserMCPCall(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	agent := createToken(t, s, "agent-runtime", "agent")
	rule := map[string]any{"id": "db_ask", "tools": []string{"mcp__db__*"}, "match_type": "args", "pattern": "*", "action": "ask"}
	if st, _, body := s.Call(s.Token, "POST", "/api/v1/permissions/rules", rule, nil); st != 201 && st != 200 {
		t.Fatalf("add the ask rule: %d %s", st, body)
	}
	const secret = "hunter2-Sup3r"
	args := map[string]any{"sql": "select name\nfrom users\nwhere id = 7", "password": secret, "options": map[string]any{"timeout": 30, "readonly": true}}
	res := checkAsync(s, agent, map[string]any{"tool_name": "mcp__db__query", "tool_args": args,
		"channel_id": "web", "session_id": "mcp-1", "wait_seconds": 30})

	ctx := newBrowser(t)
	login(t, ctx, s, s.Token)
	run(t, ctx, "the ask's card",
		chromedp.Navigate(s.URL+"/approvals"),
		chromedp.WaitVisible(tid("approval-args")))
	if got := textOf(t, ctx, tid("approval-server")); !strings.Contains(got, "db") {
		t.Errorf("card server: %q, want db", got)
	}
	if got := textOf(t, ctx, tid("approval-tool")); got != "query" {
		t.Errorf("card tool: %q, want query", got)
	}
	card := textOf(t, ctx, tid("approval"))
	if strings.Contains(card, secret) {
		t.Errorf("the card shows the password: %q", card)
	}
	lines := attrJS(t, ctx, `Array.from(document.querySelectorAll('[data-testid="approval-arg"]')).map(e => e.textContent).join("\u0001")`)
	if !strings.Contains(lines, "select name\nfrom users\nwhere id = 7") {
		t.Errorf("the query is not shown as written, on its lines: %q", lines)
	}
	if !strings.Contains(lines, "\"readonly\": true") || !strings.Contains(lines, "\n  \"timeout\": 30") {
		t.Errorf("a nested argument is not indented JSON: %q", lines)
	}
	screenshot(t, ctx, "mcp-approval-card")
	run(t, ctx, "deny", chromedp.Click(tid("deny")))
	if a := answered(t, res, 20*time.Second); a.Decision != "deny" {
		t.Errorf("the waiting call got %+v, want deny", a)
	}

	st, _, body := s.Call(s.Token, "GET", "/api/v1/decisions?server=db", nil, nil)
	var page struct {
		Decisions []struct {
			ToolName  string `json:"tool_name"`
			MCPServer string `json:"mcp_server"`
			MCPTool   string `json:"mcp_tool"`
			Summary   string `json:"summary"`
		} `json:"decisions"`
	}
	if st != 200 || json.Unmarshal(body, &page) != nil || len(page.Decisions) == 0 {
		t.Fatalf("decisions of server db: %d %s", st, body)
	}
	d := page.Decisions[0]
	if d.MCPServer != "db" || d.MCPTool != "query" || strings.Contains(d.Summary, secret) || !strings.Contains(d.Summary, `"password":"[REDACTED]"`) {
		t.Errorf("logged decision %+v: want server db, tool query and the password masked", d)
	}
	if st, _, body := s.Call(s.Token, "GET", "/api/v1/decisions?server=fs", nil, nil); st != 200 || strings.Contains(string(body), "mcp__db__") {
		t.Errorf("decisions of server fs: %d %s, want none of db's", st, body)
	}

	run(t, ctx, "the decisions page",
		chromedp.Navigate(s.URL+"/decisions?server=db"),
		chromedp.WaitVisible(tid("decisions-table")))
	if got := textOf(t, ctx, tid("decision-server")); got != "db" {
		t.Errorf("decision row server: %q, want db", got)
	}
	if got := attrJS(t, ctx, `document.querySelector('[data-testid="filter-server"]').value`); got != "db" {
		t.Errorf("server filter: %q", got)
	}
	run(t, ctx, "the rule form", chromedp.Navigate(s.URL+"/rules"), chromedp.WaitVisible(tid("rule-form")))
	offered := attrJS(t, ctx, `Array.from(document.querySelectorAll('#rule-tool-list option')).map(o => o.value + "=" + o.label).join("\n")`)
	for _, want := range []string{"mcp__db__*=MCP server db: every tool", "mcp__db__query=MCP server db: query", "bash="} {
		if !strings.Contains(offered, want) {
			t.Errorf("the rule form's tool list lacks %q: %q", want, offered)
		}
	}
	if got := attrJS(t, ctx, `Array.from(document.querySelectorAll('[data-testid="rule-match-type"] option')).map(o => o.value).join(",")`); got != ",command,path,args" {
		t.Errorf("match types offered: %q", got)
	}
	// A network tool's rule never matches, unless it is an args rule: the
	// check as you type reads the match type, and the form saves it.
	run(t, ctx, "a network tool's rule",
		chromedp.SendKeys(tid("rule-tools"), "mcp_fetch_webpage"),
		chromedp.SendKeys(tid("rule-pattern-input"), `*"url":"https://intranet.example/*`))
	WaitFor(t, 5*time.Second, "the network rule to be flagged", func() bool {
		return strings.Contains(textOf(t, ctx, tid("pattern-check")), "never match")
	})
	attrJS(t, ctx, `(() => { const s = document.querySelector('[data-testid="rule-match-type"]');
		s.value = "args"; s.dispatchEvent(new Event("change", {bubbles: true})); return s.value; })()`)
	WaitFor(t, 5*time.Second, "the args rule to be accepted", func() bool {
		return textOf(t, ctx, tid("pattern-check")) == "Pattern OK."
	})
	run(t, ctx, "save it",
		chromedp.SendKeys(tid("rule-id-input"), "intranet"),
		chromedp.SetValue(tid("rule-action-select"), "deny"),
		chromedp.Click(tid("rule-add")))
	// The page before the click has a rules table too: wait for the save
	// itself (the flash of the page it leads to), not for a table.
	run(t, ctx, "the save's answer", chromedp.WaitVisible(tid("flash")))
	_, _, rulesBody := s.Call(s.Token, "GET", "/api/v1/permissions/rules", nil, nil)
	if !strings.Contains(string(rulesBody), `"match_type":"args"`) || !strings.Contains(string(rulesBody), `"intranet"`) {
		t.Fatalf("the saved rule: %s (the page: %q)", rulesBody, textOf(t, ctx, tid("flash")))
	}
	st, _, body = s.Call(agent, "POST", "/api/v1/evaluate", map[string]any{"tool_name": "mcp_fetch_webpage",
		"tool_args": map[string]any{"url": "https://intranet.example/hr"}, "channel_id": "web"}, nil)
	if st != 200 || !strings.Contains(string(body), `"level":"deny"`) {
		t.Errorf("a fetch of the intranet: %d %s, want deny", st, body)
	}
}
