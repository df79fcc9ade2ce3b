package templates

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
)

// doc renders a component and parses it.
func doc(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	d, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func tid(id string) string { return `[data-testid="` + id + `"]` }

// count asserts how many elements have a data-testid.
func count(t *testing.T, d *goquery.Document, id string, want int) {
	t.Helper()
	if got := d.Find(tid(id)).Length(); got != want {
		t.Errorf("%s: got %d elements, want %d", id, got, want)
	}
}

func text(d *goquery.Document, id string) string {
	return strings.TrimSpace(d.Find(tid(id)).First().Text())
}

var admin = Nav{User: "admin", Role: "admin", CSRF: "tok123", CanEdit: true}
var approver = Nav{User: "ann", Role: "approver", CSRF: "tok456"}

// everyFormHasCSRF checks that each POST form carries the session's token.
func everyFormHasCSRF(t *testing.T, d *goquery.Document, token string) {
	t.Helper()
	d.Find(`form[method="post"]`).Each(func(i int, f *goquery.Selection) {
		if v, _ := f.Find(`input[name="csrf_token"]`).Attr("value"); v != token {
			t.Errorf("form %d (%s) has csrf_token %q, want %q", i, f.AttrOr("action", ""), v, token)
		}
	})
}

// onlyLogoutForm checks that a read-only page renders no edit forms.
func onlyLogoutForm(t *testing.T, d *goquery.Document) {
	t.Helper()
	d.Find("form").Each(func(i int, f *goquery.Selection) {
		if f.AttrOr("action", "") != "/logout" {
			t.Errorf("read-only page renders a form to %s", f.AttrOr("action", ""))
		}
	})
	count(t, d, "read-only", 1)
}

func TestLayoutShowsFlashAndUser(t *testing.T) {
	n := admin
	n.Active = "/tools"
	n.Flash = Flash{Kind: "ok", Text: "Saved."}
	d := doc(t, Tools(ToolsProps{Nav: n}))
	if got := text(d, "flash"); got != "Saved." {
		t.Errorf("flash: got %q", got)
	}
	if got := text(d, "user"); got != "admin (admin)" {
		t.Errorf("user: got %q", got)
	}
	if !d.Find(tid("nav-Tools")).HasClass("active") {
		t.Errorf("the Tools link is not marked active")
	}
	count(t, d, "read-only", 0)
}

func TestLogin(t *testing.T) {
	d := doc(t, Login(LoginProps{CSRF: "abc", Error: "That token is not valid."}))
	count(t, d, "login-form", 1)
	if got := text(d, "login-error"); got != "That token is not valid." {
		t.Errorf("error: got %q", got)
	}
	if typ, _ := d.Find(tid("token")).Attr("type"); typ != "password" {
		t.Errorf("token input type %q, want password", typ)
	}
	everyFormHasCSRF(t, d, "abc")
}

func TestOverview(t *testing.T) {
	p := OverviewProps{Nav: admin, ETag: "e1", Enabled: true, Schema: "tiered_policy", Tiered: true, Mode: "strict",
		Severity: []SeverityRow{{"LOW", "allow"}, {"MEDIUM", "ask"}, {"HIGH", "ask"}, {"CRITICAL", "deny"}},
		Defaults: "ask", Counts: []Count{{Label: "rules", N: 3, Link: "/rules"}},
		Problems: []string{"In permissions.rules[0].pattern: bad"}, Pending: 2, PendingKnown: true}
	d := doc(t, Overview(p))
	if got := text(d, "mode"); got != "strict" {
		t.Errorf("mode: got %q", got)
	}
	if got := d.Find(tid("severity-table") + " tbody tr").Length(); got != 4 {
		t.Errorf("severity rows: got %d", got)
	}
	if got := d.Find(tid("severity-table") + " tbody tr").Last().Text(); !strings.Contains(got, "deny") {
		t.Errorf("CRITICAL in strict mode: got %q, want deny", got)
	}
	if got := text(d, "problem"); !strings.Contains(got, "rules[0]") {
		t.Errorf("problem: got %q", got)
	}
	if got := text(d, "pending-count"); got != "2 waiting" {
		t.Errorf("pending: got %q", got)
	}
	if got := text(d, "enabled-switch"); !strings.Contains(got, "Turn permission checks off") {
		t.Errorf("danger zone switch: got %q, want the button that turns checks off", got)
	}
	if got := text(d, "danger-zone"); !strings.Contains(got, "allow every tool call") {
		t.Errorf("danger zone: got %q, want it to say what turning checks off does", got)
	}
	if v, _ := d.Find(`input[name="etag"]`).Attr("value"); v != "e1" {
		t.Errorf("etag field: got %q", v)
	}
	everyFormHasCSRF(t, d, "tok123")

	ro := doc(t, Overview(OverviewProps{Nav: approver, Mode: "normal"}))
	onlyLogoutForm(t, ro)
	if got := text(ro, "pending-count"); got != "not available" {
		t.Errorf("pending without manager: got %q", got)
	}
}

func TestTools(t *testing.T) {
	p := ToolsProps{Nav: admin, ETag: "e", Default: "ask", Tools: []ToolRow{
		{Name: "bash", Category: "shell", Level: "ask"}, {Name: "grep", Category: "path"}, {Name: "x", Category: "other", Level: "allow", Legacy: true}}}
	d := doc(t, Tools(p))
	// One Save for the whole page, the tools grouped by category in the
	// page's order, each select remembering the level it showed.
	count(t, d, "tools-save", 1)
	count(t, d, "tool-select", 3)
	var groups []string
	d.Find(`tbody[data-testid^="tools-"]`).Each(func(_ int, s *goquery.Selection) { groups = append(groups, s.AttrOr("data-testid", "")) })
	if got := strings.Join(groups, ","); got != "tools-shell,tools-path,tools-other" {
		t.Errorf("groups: got %s", got)
	}
	if got := d.Find(`input[name="was:bash"]`).AttrOr("value", "?"); got != "ask" {
		t.Errorf("was:bash: got %q", got)
	}
	if got := d.Find(tid("tool-bash")+" option[selected]").AttrOr("value", "?"); got != "ask" {
		t.Errorf("bash selected level: got %q", got)
	}
	if got := d.Find(tid("tool-grep")+" option[selected]").AttrOr("value", "?"); got != "" {
		t.Errorf("grep (not set) selected: got %q", got)
	}
	everyFormHasCSRF(t, d, "tok123")
	ro := doc(t, Tools(ToolsProps{Nav: approver, Tools: p.Tools}))
	onlyLogoutForm(t, ro)
	count(t, ro, "tool-level", 3)
}

func TestRules(t *testing.T) {
	p := RulesProps{Nav: admin, ETag: "e",
		Rules:   []RuleRow{{RuleFields: RuleFields{ID: "r1", Tools: "bash", Pattern: "ls *", Action: "allow"}}, {RuleFields: RuleFields{ID: "r2", Tools: "write_file", Pattern: "re:\\.env$", Severity: "MEDIUM"}, Level: "allow"}},
		Builtin: []RuleRow{{RuleFields: RuleFields{ID: "b1", Tools: "bash", Pattern: "rm -rf /*", Action: "deny"}}}, BuiltinSource: "package",
		Test: TestBox{Ran: true, Results: []TestResult{{Sample: "ls -la", Tool: "bash", Matched: true, Level: "allow"}, {Sample: "rm x", Tool: "bash", Level: "ask"}}},
	}
	d := doc(t, Rules(p))
	count(t, d, "rule-row", 2)
	count(t, d, "builtin-row", 1)
	count(t, d, "rule-delete", 2)
	if got := d.Find(tid("rule-row")).Eq(1).Find(tid("rule-action")).Text(); !strings.Contains(got, "MEDIUM →") || !strings.Contains(got, "allow") {
		t.Errorf("severity rule effect: got %q, want the severity and the level it gives", got)
	}
	if got := text(d, "builtin-source"); !strings.Contains(got, "package default") {
		t.Errorf("builtin source: got %q", got)
	}
	count(t, d, "rule-add", 1)
	if got := d.Find(tid("test-result") + `[data-matched="true"]`).Length(); got != 1 {
		t.Errorf("matched samples: got %d, want 1", got)
	}
	if d.Find(`script[src="/static/rules.js"]`).Length() != 1 {
		t.Errorf("rules.js is not included")
	}
	everyFormHasCSRF(t, d, "tok123")

	edit := doc(t, Rules(RulesProps{Nav: admin, Form: RuleForm{Editing: true, OrigID: "r1", RuleFields: RuleFields{ID: "r1", Pattern: "ls *"}, Error: "Not saved: bad"}}))
	count(t, edit, "rule-save", 1)
	if v, _ := edit.Find(`input[name="orig_id"]`).Attr("value"); v != "r1" {
		t.Errorf("orig_id: got %q", v)
	}
	if got := text(edit, "rule-error"); got != "Not saved: bad" {
		t.Errorf("rule error: got %q", got)
	}

	ro := doc(t, Rules(RulesProps{Nav: approver, Rules: p.Rules}))
	count(t, ro, "rule-delete", 0)
	count(t, ro, "test-form", 0) // an approver gets no form it cannot submit
	count(t, ro, "rule-form", 0)
}

func TestDirectories(t *testing.T) {
	p := DirectoriesProps{Nav: admin, ETag: "e", Star: "ask", Entries: []DirRow{{Key: "/srv", Level: "allow"}},
		Trusted: &TrustedResult{Dir: "/srv", Tiered: true, Created: []OverrideRow{{ID: "cli_trusted_path_1", Source: "cli_add_dir"}}}}
	d := doc(t, Directories(p))
	count(t, d, "dir-row", 2)
	count(t, d, "dir-delete", 1) // "*" cannot be deleted
	count(t, d, "trust-form", 1)
	if got := text(d, "trusted-overrides"); !strings.Contains(got, "cli_trusted_path_1") {
		t.Errorf("trusted overrides: got %q", got)
	}
	count(t, d, "override-revoke", 0)
	everyFormHasCSRF(t, d, "tok123")
	onlyLogoutForm(t, doc(t, Directories(DirectoriesProps{Nav: approver, Star: "ask", Entries: p.Entries})))
}

func TestOverrides(t *testing.T) {
	rows := []OverrideRow{{ID: "o1", Source: "user_approval", Created: "2026-01-02T03:04:05Z"}, {ID: "o2", Source: "cli_add_dir"}}
	d := doc(t, Overrides(OverridesProps{Nav: admin, ETag: "e", Overrides: rows}))
	count(t, d, "override-row", 2)
	count(t, d, "override-revoke", 2)
	if got := d.Find(tid("override-row")).Eq(1).Text(); !strings.Contains(got, "not recorded") {
		t.Errorf("missing created time: got %q", got)
	}
	everyFormHasCSRF(t, d, "tok123")
	count(t, doc(t, Overrides(OverridesProps{Nav: admin})), "no-overrides", 1)
	onlyLogoutForm(t, doc(t, Overrides(OverridesProps{Nav: approver, Overrides: rows})))
}

func TestPlayground(t *testing.T) {
	p := PlaygroundProps{Nav: admin, Tools: []ToolOption{{Value: "bash"}, {Value: "mcp__fs__*", Label: "MCP server fs: every tool"}}, Form: PlayForm{Tool: "bash", Command: "ls"},
		Result: &PlayResult{Level: "allow", MatchedRule: "tools.bash", Reason: "Allowed by rule: tools.bash",
			Steps: []StepRow{{Name: "baseline", Result: "allow"}, {Name: "tool_level", Result: "allow", Rule: "tools.bash", Decisive: true}, {Name: "escalation"}}}}
	d := doc(t, Playground(p))
	count(t, d, "decisive-step", 1)
	count(t, d, "step", 2)
	if got := text(d, "decisive-step"); !strings.Contains(got, "tool_level") || !strings.Contains(got, "tools.bash") {
		t.Errorf("decisive step: got %q", got)
	}
	if got := text(d, "play-rule"); got != "tools.bash" {
		t.Errorf("rule: got %q", got)
	}
	everyFormHasCSRF(t, d, "tok123")
	ro := doc(t, Playground(PlaygroundProps{Nav: approver}))
	onlyLogoutForm(t, ro)
}

func TestApprovals(t *testing.T) {
	rows := []ApprovalRow{{ID: "a1", Tool: "bash", Summary: "rm -rf build /srv/x", Reason: "Approval required", External: "/srv/x",
		ExternalPaths: []string{"/srv/x"}, Remember: "rm -rf build /srv/x", RememberType: "command"}}
	n := approver
	n.CanEdit = true
	d := doc(t, Approvals(ApprovalsProps{Nav: n, Available: true, CanDecide: true, Pending: rows}))
	if got := d.Find(tid("approvals") + " " + tid("approval")).Length(); got != 1 {
		t.Errorf("approvals listed: got %d", got)
	}
	if got := d.Find(tid("approvals") + " " + tid("approval-external")).Text(); got != "/srv/x" {
		t.Errorf("external paths in the prompt: got %q", got)
	}
	for _, c := range []string{"allow-once", "allow-always", "deny"} {
		if d.Find(tid("approvals")+" "+tid(c)).Length() != 1 {
			t.Errorf("choice %s missing", c)
		}
	}
	if _, hidden := d.Find(tid("no-approvals")).Attr("hidden"); !hidden {
		t.Errorf("the empty note shows with an ask pending")
	}
	if got := d.Find(tid("allow-always-pattern")).Text(); !strings.Contains(got, "command rm -rf build /srv/x") {
		t.Errorf("always allow says it remembers %q, want the command", got)
	}
	everyFormHasCSRF(t, d, "tok456")
	count(t, doc(t, Approvals(ApprovalsProps{Nav: n})), "approvals-unavailable", 1)
	// A call with nothing to remember offers no always-allow.
	rows[0].Remember = ""
	d = doc(t, Approvals(ApprovalsProps{Nav: n, Available: true, CanDecide: true, Pending: rows}))
	count(t, d, "allow-always", 0)
	count(t, d, "no-always", 1)
}

func TestMessage(t *testing.T) {
	d := doc(t, Message(MessageProps{Nav: admin, Title: "Conflict", Text: "changed", TestID: "conflict", Link: "/tools", LinkText: "Reload"}))
	count(t, d, "conflict", 1)
	if v, _ := d.Find(tid("message-link")).Attr("href"); v != "/tools" {
		t.Errorf("link: got %q", v)
	}
}

// TestRulesPreview: the impact preview lists each call that would change,
// from what to what, and is absent until asked for.
func TestRulesPreview(t *testing.T) {
	d := doc(t, Rules(RulesProps{Nav: admin}))
	count(t, d, "rule-preview", 0)
	count(t, d, "rule-preview-button", 1)
	p := RulesProps{Nav: admin, Preview: RulePreview{Ran: true, Replayed: 5, Calls: 3, Changes: []PreviewRow{
		{ID: "1", Tool: "bash", Summary: "git push origin main", From: "ask", FromRule: "tools.bash", To: "deny", ToRule: "tiered_policy:rules:deny:rules[no_push]", Count: 3},
	}}}
	d = doc(t, Rules(p))
	count(t, d, "preview-change", 1)
	if got := text(d, "preview-summary"); !strings.Contains(got, "Replayed 5") || !strings.Contains(got, "3 would be decided differently (1 distinct call)") ||
		!strings.Contains(got, "press Add rule") {
		t.Errorf("preview summary: got %q", got)
	}
	if got := text(d, "preview-count"); got != "×3" {
		t.Errorf("preview count: got %q, want ×3", got)
	}
	// Nothing replayed: the page says so instead of "0 would change".
	empty := doc(t, Rules(RulesProps{Nav: admin, Preview: RulePreview{Ran: true, Note: "use --log-full-args"}}))
	if got := text(empty, "preview-summary"); !strings.Contains(got, "Nothing was replayed") || strings.Contains(got, "0 would") {
		t.Errorf("empty preview summary: got %q", got)
	}
	if got := d.Find(tid("preview-change")).Text(); !strings.Contains(got, "deny") || !strings.Contains(got, "rules[no_push]") {
		t.Errorf("preview row: got %q", got)
	}
}

// TestApprovalCardChoices: a card offers every answer, each with its scope
// in words; the session answer is disabled with its reason when the ask
// has no session; each "allow for" button posts its ttl_seconds without
// JavaScript (in its formaction) and carries it for the script.
func TestApprovalCardChoices(t *testing.T) {
	base := ApprovalRow{ID: "a1", Tool: "bash", Summary: "make deploy", Session: "s1", HasSession: true,
		Remember: "make deploy", RememberType: "command"}
	noSession := base
	noSession.HasSession, noSession.Session = false, "–"
	digest := base
	digest.Tool, digest.Remember, digest.RememberType = "mcp__fs__search", "", ""
	cases := []struct {
		note         string
		row          ApprovalRow
		sessionOff   bool
		sessionScope string
		forScope     string
		always       bool
	}{
		{note: "a shell ask in a session", row: base, sessionScope: "bash command make deploy in session s1, 24 h at most",
			forScope: "bash command make deploy in any session", always: true},
		{note: "an ask without a session cannot be remembered for one", row: noSession, sessionOff: true,
			forScope: "bash command make deploy in any session", always: true},
		{note: "a call with nothing to remember is this exact call", row: digest, sessionScope: "this exact call in session s1",
			forScope: "this exact call in any session"},
	}
	for _, c := range cases {
		d := doc(t, ApprovalItem(c.row, true, "tok"))
		everyFormHasCSRF(t, d, "tok")
		btn := d.Find(tid("allow-session"))
		_, disabled := btn.Attr("disabled")
		if disabled != c.sessionOff {
			t.Errorf("%s: allow-session disabled %v, want %v", c.note, disabled, c.sessionOff)
		}
		if c.sessionOff {
			if got := text(d, "no-session"); !strings.Contains(got, "without a session") {
				t.Errorf("%s: the disabled session answer says %q, want why", c.note, got)
			}
		} else if got := strings.Join(strings.Fields(text(d, "allow-session-scope")), " "); !strings.Contains(got, c.sessionScope) {
			t.Errorf("%s: session scope %q, want %q", c.note, got, c.sessionScope)
		}
		if got := strings.Join(strings.Fields(text(d, "allow-for-scope")), " "); !strings.Contains(got, c.forScope) {
			t.Errorf("%s: allow-for scope %q, want %q", c.note, got, c.forScope)
		}
		if got := d.Find(tid("allow-always")).Length() == 1; got != c.always {
			t.Errorf("%s: always allow offered %v, want %v", c.note, got, c.always)
		}
		for id, ttl := range map[string]string{"allow-for": "3600", "allow-for-900": "900", "allow-for-28800": "28800", "allow-for-86400": "86400"} {
			b := d.Find(tid(id))
			if b.AttrOr("value", "") != "allow_for" || b.AttrOr("data-ttl", "") != ttl || b.AttrOr("formaction", "") != "/approvals/decide?ttl_seconds="+ttl {
				t.Errorf("%s: %s is value %q ttl %q formaction %q, want allow_for %s", c.note, id, b.AttrOr("value", ""), b.AttrOr("data-ttl", ""), b.AttrOr("formaction", ""), ttl)
			}
		}
		if got := strings.TrimSpace(d.Find(tid("allow-for")).Contents().First().Text()); !strings.HasPrefix(got, "Allow for 1 hour") {
			t.Errorf("%s: the main allow-for button reads %q", c.note, got)
		}
		for id, want := range map[string]string{"allow-once": "allow_once", "allow-session": "allow_session", "deny": "deny"} {
			if got := d.Find(tid(id)).AttrOr("value", ""); got != want {
				t.Errorf("%s: %s sends %q, want %q", c.note, id, got, want)
			}
		}
	}
}

// TestGrantsPage: the live grants with their filters, the revoke for who
// may answer asks, and the always-allow overrides with theirs for admins.
func TestGrantsPage(t *testing.T) {
	rows := []GrantRow{{ID: "g_1", Tool: "bash", Pattern: "make deploy", MatchType: "command", Scope: "session", ScopeText: "this session",
		Session: "s1", Agent: "claude-code"}, {ID: "g_2", Tool: "mcp__fs__search", Exact: true, Summary: `{"q":1}`, Scope: "timed"}}
	always := []OverrideRow{{ID: "user_allow_bash", Tools: "bash", Pattern: "make deploy", MatchType: "command", ApprovedBy: "ann"}}
	p := GrantsProps{Nav: admin, Available: true, Grants: rows, Live: 2, CanRevoke: true, Overrides: always, CanRevokeAlways: true,
		Agents: []string{"claude-code"}, Filter: GrantFilter{Agent: "codex"}}
	d := doc(t, Grants(p))
	count(t, d, "grant-row", 2)
	count(t, d, "grant-revoke", 2)
	count(t, d, "grant-override-row", 1)
	count(t, d, "grant-override-revoke", 1)
	everyFormHasCSRF(t, d, "tok123")
	if got := d.Find(tid("grant-covers")).Eq(1).Text(); !strings.Contains(got, "this exact call") || !strings.Contains(got, `{"q":1}`) {
		t.Errorf("a digest grant covers %q", got)
	}
	if got := d.Find(tid("grant-filter-agent")+` option[selected]`).AttrOr("value", ""); got != "codex" {
		t.Errorf("the agent asked for is not kept selected: %q", got)
	}
	p.CanRevoke, p.CanRevokeAlways = false, false
	d = doc(t, Grants(p))
	count(t, d, "grant-revoke", 0)
	count(t, d, "grant-override-revoke", 0)
	p.Grants, p.Live, p.Filter = nil, 0, GrantFilter{}
	count(t, doc(t, Grants(p)), "no-grants", 1)
	count(t, doc(t, Grants(GrantsProps{Nav: admin})), "grants-unavailable", 1)
}

// TestApprovalCardNoAllowForWhenLimited: a person limited to some sessions
// is not offered "allow for" (its grant would hold in every session), and
// is told why; the session answer stays theirs.
func TestApprovalCardNoAllowForWhenLimited(t *testing.T) {
	cases := []struct {
		note    string
		limited bool
	}{
		{note: "unlimited: every duration", limited: false},
		{note: "limited to sessions: none, with the reason", limited: true},
	}
	for _, c := range cases {
		row := ApprovalRow{ID: "a1", Tool: "bash", Summary: "make deploy", Session: "s1", HasSession: true, NoAllowFor: c.limited}
		d := doc(t, ApprovalItem(row, true, "tok"))
		want := 4
		if c.limited {
			want = 0
		}
		if got := d.Find(`button[value="allow_for"]`).Length(); got != want {
			t.Errorf("%s: %d allow-for buttons, want %d", c.note, got, want)
		}
		if got := d.Find(tid("no-allow-for")).Length() == 1; got != c.limited {
			t.Errorf("%s: the reason shown %v, want %v", c.note, got, c.limited)
		}
		if _, off := d.Find(tid("allow-session")).Attr("disabled"); off {
			t.Errorf("%s: allow for this session is disabled", c.note)
		}
	}
}
