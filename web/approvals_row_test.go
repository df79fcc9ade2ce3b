package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

var english = translatorFor(context.Background())

// TestExplainRule: a matched_rule string becomes the deciding rules'
// descriptions and the risk they carry.
func TestExplainRule(t *testing.T) {
	index := map[string]ruleMeta{
		"builtin[rm_important_path]": {ID: "rm_important_path", Description: "Deleting system directories.", Severity: "CRITICAL", Builtin: true},
		"rules[deploy]":              {ID: "deploy", Description: "deploys need a person", Action: "ask"},
		"rules[bare]":                {ID: "bare"},
	}
	cases := []struct {
		note, matched            string
		wantReason, wantSource   string
		wantSeverity, wantClass  string
		wantExternal, wantToolLv bool
	}{
		{note: "built-in rule", matched: "tiered_policy:builtin:builtin[rm_important_path]", wantReason: "Deleting system directories.",
			wantSource: "built-in safety rule", wantSeverity: "CRITICAL", wantClass: "high"},
		{note: "user rule with action", matched: "tiered_policy:rules:rules[deploy]", wantReason: "deploys need a person",
			wantSource: "your rule", wantClass: "low"},
		{note: "user rule without action or severity is HIGH", matched: "tiered_policy:rules:rules[bare]", wantReason: "Your rule matched: bare.",
			wantSource: "your rule", wantSeverity: "HIGH", wantClass: "medium"},
		{note: "tool level and external directory", matched: "tools.bash|external_directory.*", wantReason: "tool's level is ask",
			wantSource: "tool level", wantClass: "high", wantExternal: true, wantToolLv: true},
		{note: "two rules joined", matched: "tiered_policy:rules:rules[bare]+rules[deploy]", wantReason: "deploys need a person",
			wantSource: "your rule", wantSeverity: "HIGH", wantClass: "medium"},
	}
	for _, c := range cases {
		w := explainRule(c.matched, "bash", index, english)
		if !strings.Contains(w.Reason, c.wantReason) {
			t.Errorf("%s: reason %q, want it to contain %q", c.note, w.Reason, c.wantReason)
		}
		if w.External != c.wantExternal || w.ToolLevel != c.wantToolLv {
			t.Errorf("%s: external %v tool level %v, want %v %v", c.note, w.External, w.ToolLevel, c.wantExternal, c.wantToolLv)
		}
		rc := riskCue(w, "bash", english)
		if rc.Source != c.wantSource || rc.Severity != c.wantSeverity || rc.Class != c.wantClass {
			t.Errorf("%s: risk %+v, want source %q severity %q class %q", c.note, rc, c.wantSource, c.wantSeverity, c.wantClass)
		}
	}
}

// TestApprovalRowRedactsAndRemembers: the card's arguments and content
// preview are redacted and cut short, and always-allow names the exact
// pattern the store would write.
func TestApprovalRowRedactsAndRemembers(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	content := "line\n" + strings.Repeat("x", 2000) + "\nAWS_SECRET_ACCESS_KEY=abcdEFGH1234abcdEFGH1234abcdEFGH1234abcd\n"
	a := approval.Approval{ID: "a1", CreatedAt: now, ExpiresAt: now.Add(5 * time.Minute),
		Request: approval.Request{ToolName: "write_file", ToolArgs: map[string]any{"path": "/srv/app/.env", "content": content, "api_key": "sk-live-123"}},
		Asked:   approval.Asked{MatchedRule: "tools.write_file", ExternalPaths: []string{"/srv/app/.env"}}}
	row := approvalRow(a, nil, now, english)
	if strings.Contains(row.Args, "sk-live-123") {
		t.Errorf("the arguments show a secret: %s", row.Args)
	}
	if len(row.Preview) != 1 || !row.Preview[0].Truncated || len(row.Preview[0].Text) > previewBytes {
		t.Fatalf("preview: %+v, want one cut-short content preview", row.Preview)
	}
	a.Request.ToolArgs = map[string]any{"path": "/srv/app/.env", "content": "export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"}
	if p := approvalRow(a, nil, now, english).Preview; len(p) != 1 || strings.Contains(p[0].Text, "ghp_abcdef") {
		t.Errorf("content preview shows a secret: %+v", p)
	}
	if row.Remember != "/srv/app/.env" || row.RememberType != "path" {
		t.Errorf("always allow remembers %s %q, want path /srv/app/.env", row.RememberType, row.Remember)
	}
	if row.Expires != "03:09:05 UTC" || row.ExpiresIn != "in 5 min" {
		t.Errorf("expiry %q (%q), want 03:09:05 UTC (in 5 min)", row.Expires, row.ExpiresIn)
	}
	if row.Risk.Class != "high" || !row.Risk.External {
		t.Errorf("risk %+v, want high with external paths", row.Risk)
	}
}

// TestRebuildArgs: a logged summary turns back into arguments for the
// decisions page's trace and playground link.
func TestRebuildArgs(t *testing.T) {
	cases := []struct {
		note, tool, summary string
		want                map[string]any
		ok                  bool
	}{
		{note: "shell", tool: "bash", summary: "git status -s", want: map[string]any{"command": "git status -s"}, ok: true},
		{note: "path pairs", tool: "write_file", summary: "path=/a b.txt content=hi there", want: map[string]any{"path": "/a b.txt", "content": "hi there"}, ok: true},
		{note: "json", tool: "mcp_fetch_webpage", summary: `{"url":"https://x"}`, want: map[string]any{"url": "https://x"}, ok: true},
		{note: "empty", tool: "bash", summary: "", ok: false},
	}
	for _, c := range cases {
		got, ok := rebuildArgs(c.tool, c.summary)
		if ok != c.ok || len(got) != len(c.want) {
			t.Errorf("%s: got %v %v, want %v %v", c.note, got, ok, c.want, c.ok)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v", c.note, k, got[k], v)
			}
		}
	}
}

// TestApprovalRowSaysTheTrueCause: an ask the shell escalation raised (the
// policy allowed `cd <trusted dir> && ls`) reads as the escalation, not as
// "outside the workspace" at high risk, even though the trusted directory is
// among the call's external paths; the engine reports that cause.
func TestApprovalRowSaysTheTrueCause(t *testing.T) {
	perms := map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "ask"}, "tools": map[string]any{"bash": "allow"},
		"external_directory": map[string]any{"*": "ask", "/data/shared": "allow"}}
	e, problems := engine.Compile(perms, nil, engine.Options{Workspace: "/ws", HomeDir: "/home/u"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	req := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "cd /data/shared && ls"}), ChannelID: "web"}
	d := e.Evaluate(req)
	if d.Level != policy.Ask || d.Cause != engine.CauseEscalation {
		t.Fatalf("engine: %s cause %q (%s), want ask by the escalation", d.Level, d.Cause, d.MatchedRule)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := approval.Approval{ID: "a1", CreatedAt: now, ExpiresAt: now.Add(time.Minute),
		Request: approval.Request{ToolName: "bash", ToolArgs: req.Call.Args()},
		Asked:   approval.Asked{MatchedRule: d.MatchedRule, Reason: d.Reason, ExternalPaths: []string{"/data/shared"}, Cause: d.Cause}}
	row := approvalRow(a, nil, now, english)
	if row.Risk.External || row.Risk.Class == "high" || !strings.Contains(row.Reason, "chains or substitutes") {
		t.Errorf("card: reason %q, risk %+v; want the escalation, not a high external risk", row.Reason, row.Risk)
	}
	a.Asked.Cause = ""
	if row := approvalRow(a, nil, now, english); !row.Risk.External {
		t.Errorf("an ask kept without its cause: risk %+v, want the external paths shown as before", row.Risk)
	}
}
