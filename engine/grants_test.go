package engine

import (
	"strconv"
	"testing"
	"time"

	"github.com/toolgate/toolgate/policy"
)

// grantPolicy asks for everything a grant could cover, and denies one
// command that no grant may reach.
const grantPolicy = `schema: tiered_policy
permission_mode: normal
defaults: {"*": ask}
tools: {bash: ask, read_file: ask}
rules:
  - {id: no_push, tools: [bash], pattern: "git push *", action: deny}
`

// TestGrantsCoverOnlyWhatWasApproved holds a grant to its tool, pattern or
// digest, channel, workspace, session and expiry, and to the override's
// checks (every path value, no chained command).
func TestGrantsCoverOnlyWhatWasApproved(t *testing.T) {
	base, problems := compileYAML(t, grantPolicy, "")
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	ws := base.GrantWorkspace(&Request{})
	grants := []Grant{
		{ID: "g_rm", Tool: "bash", Channel: "web", Workspace: ws, Session: "s1", Token: "tok_a", MatchType: "command", Pattern: "rm -rf build", ExpiresAt: now.Add(time.Hour)},
		{ID: "g_old", Tool: "bash", Channel: "web", Workspace: ws, MatchType: "command", Pattern: "make clean", ExpiresAt: now.Add(-time.Second)},
		{ID: "g_env", Tool: "read_file", Channel: "web", Workspace: ws, MatchType: "path", Pattern: "/ws/project/.env", ExpiresAt: now.Add(time.Hour)},
		{ID: "g_push", Tool: "bash", Channel: "web", Workspace: ws, MatchType: "command", Pattern: "git push origin main", ExpiresAt: now.Add(time.Hour)},
		{ID: "g_mcp", Tool: "mcp__fs__edit_file", Channel: "web", Workspace: ws, Digest: mustDigest(t, map[string]any{"path": "a.txt", "edits": []any{"x"}}), ExpiresAt: now.Add(time.Hour)},
		{ID: "g_cat", Tool: "bash", Channel: "web", Workspace: ws, MatchType: "command", Pattern: "cat *", ExpiresAt: now.Add(time.Hour)},
		{ID: "g_re", Tool: "bash", Channel: "web", Workspace: ws, MatchType: "command", Pattern: "re:.*", ExpiresAt: now.Add(time.Hour)},
		{ID: "g_slack", Tool: "bash", Channel: "slack", Workspace: ws, MatchType: "command", Pattern: "npm test", ExpiresAt: now.Add(time.Hour)},
	}
	e, problems := base.WithGrants(grants, func() time.Time { return now })
	if len(problems) != 0 {
		t.Fatalf("grant problems: %v", problems)
	}
	in := func(r *Request, session string) *Request { r.SessionID, r.TokenID = session, "tok_a"; return r }
	as := func(r *Request, token string) *Request { r.TokenID = token; return r }
	mcp := func(args map[string]any) *Request {
		return &Request{Call: NewCall("mcp__fs__edit_file", args), ChannelID: "web"}
	}
	runDecisionCases(t, e, []decisionCase{
		{"a session grant allows its command in its session", in(shellCall("bash", "rm -rf build"), "s1"), policy.Allow, "tiered_policy:grants:grants[g_rm]"},
		{"not in another session", in(shellCall("bash", "rm -rf build"), "s2"), policy.Ask, "tools.bash"},
		{"not for another token naming the session", as(in(shellCall("bash", "rm -rf build"), "s1"), "tok_b"), policy.Ask, "tools.bash"},
		{"not without a session", shellCall("bash", "rm -rf build"), policy.Ask, "tools.bash"},
		{"not a chained command", in(shellCall("bash", "rm -rf build; curl x | sh"), "s1"), policy.Ask, "tools.bash|external_directory.*"},
		{"an expired grant decides nothing", shellCall("bash", "make clean"), policy.Ask, "tools.bash"},
		{"a path grant covers its path", pathCall("read_file", "/ws/project/.env"), policy.Allow, "tiered_policy:grants:grants[g_env]"},
		{"a path grant does not cover a dotted way out", pathCall("read_file", "/ws/project/../project2/.env"), policy.Ask, "tools.read_file|external_directory.*"},
		{"a grant never beats a deny rule", shellCall("bash", "git push origin main"), policy.Deny, "tiered_policy:rules:deny:rules[no_push]"},
		{"a digest grant covers the identical call", mcp(map[string]any{"edits": []any{"x"}, "path": "a.txt"}), policy.Allow, "tiered_policy:grants:grants[g_mcp]"},
		{"a digest grant covers no other arguments", mcp(map[string]any{"edits": []any{"y"}, "path": "a.txt"}), policy.Ask, "tiered_policy:defaults.*"},
		{"a remembered glob covers only itself", shellCall("bash", "cat *"), policy.Allow, "tiered_policy:grants:grants[g_cat]"},
		{"a remembered glob is not a glob", shellCall("bash", "cat /ws/project/x"), policy.Ask, "tools.bash"},
		{"a remembered re: is not a regex", shellCall("bash", "echo hi"), policy.Ask, "tools.bash"},
		{"a grant holds on its channel only", shellCall("bash", "npm test"), policy.Ask, "tools.bash"},
	})
	other := shellCall("bash", "rm -rf build")
	other.SessionID, other.TokenID, other.Workspace = "s1", "tok_a", "/elsewhere"
	if d := e.Evaluate(other); d.Level != policy.Ask {
		t.Errorf("a grant held in another workspace: %s %s", d.Level, d.MatchedRule)
	}
	if d := base.Evaluate(in(shellCall("bash", "rm -rf build"), "s1")); d.Level != policy.Ask {
		t.Errorf("the engine WithGrants was made from changed: %s", d.MatchedRule)
	}
}

// TestGrantsExpireToTheSecond moves the clock across a grant's expiry.
func TestGrantsExpireToTheSecond(t *testing.T) {
	base, _ := compileYAML(t, grantPolicy, "")
	start := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	now := start
	e, _ := base.WithGrants([]Grant{{ID: "g", Tool: "bash", Channel: "web", Workspace: base.GrantWorkspace(&Request{}),
		MatchType: "command", Pattern: "npm test", ExpiresAt: start.Add(60 * time.Second)}}, func() time.Time { return now })
	for _, c := range []struct {
		note  string
		at    time.Duration
		level policy.Level
	}{
		{"at creation", 0, policy.Allow},
		{"one second before expiry", 59 * time.Second, policy.Allow},
		{"at expiry", 60 * time.Second, policy.Ask},
		{"after expiry", 61 * time.Second, policy.Ask},
	} {
		now = start.Add(c.at)
		if d := e.Evaluate(shellCall("bash", "npm test")); d.Level != c.level {
			t.Errorf("%s: got %s, want %s", c.note, d.Level, c.level)
		}
	}
}

// TestGrantsInLegacyPolicy: the legacy schema has no override step; a
// grant answers its ask and leaves its deny alone.
func TestGrantsInLegacyPolicy(t *testing.T) {
	base, problems := compileYAML(t, "tools:\n  bash:\n    \"*\": ask\n    patterns: {\"rm *\": deny}\n", "")
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	now := time.Now()
	ws := base.GrantWorkspace(&Request{})
	e, _ := base.WithGrants([]Grant{
		{ID: "g1", Tool: "bash", Channel: "web", Workspace: ws, MatchType: "command", Pattern: "npm test", ExpiresAt: now.Add(time.Hour)},
		{ID: "g2", Tool: "bash", Channel: "web", Workspace: ws, MatchType: "command", Pattern: "rm x", ExpiresAt: now.Add(time.Hour)},
	}, nil)
	if d := e.Evaluate(shellCall("bash", "npm test")); d.Level != policy.Allow || d.MatchedRule != "tiered_policy:grants:grants[g1]" {
		t.Errorf("legacy ask with a grant: %s %s", d.Level, d.MatchedRule)
	}
	if d := e.Evaluate(shellCall("bash", "rm x")); d.Level != policy.Deny {
		t.Errorf("legacy deny with a grant: %s %s", d.Level, d.MatchedRule)
	}
}

// TestGrantsCostNoAllocation: a call no grant covers pays no allocation.
func TestGrantsCostNoAllocation(t *testing.T) {
	base, _ := compileYAML(t, grantPolicy, "")
	ws := base.GrantWorkspace(&Request{})
	e, _ := base.WithGrants([]Grant{{ID: "g", Tool: "bash", Channel: "web", Workspace: ws, MatchType: "command",
		Pattern: "npm test", ExpiresAt: time.Now().Add(time.Hour)}}, nil)
	req := shellCall("bash", "npm run build")
	if n := testing.AllocsPerRun(200, func() { e.Evaluate(req) }); n != 0 {
		t.Errorf("a call no grant covers: %v allocations", n)
	}
}

func mustDigest(t *testing.T, args map[string]any) string {
	t.Helper()
	d, err := ArgsDigest(args)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// BenchmarkGrants measures what live grants add to a decision: a call no
// grant covers and one a grant covers, with 0, 10 and 1,000 grants of the
// call's tool (each for another command), under the default-shaped
// policy of these tests.
func BenchmarkGrants(b *testing.B) {
	base, _ := compileYAML(b, grantPolicy, "")
	ws := base.GrantWorkspace(&Request{})
	for _, n := range []int{0, 10, 1000} {
		list := make([]Grant, 0, n+1)
		for i := range n {
			list = append(list, Grant{ID: "g" + strconv.Itoa(i), Tool: "bash", Channel: "web", Workspace: ws, Session: "s1",
				MatchType: "command", Pattern: "make target-" + strconv.Itoa(i), ExpiresAt: time.Now().Add(time.Hour)})
		}
		list = append(list, Grant{ID: "covered", Tool: "bash", Channel: "web", Workspace: ws, Session: "s1",
			MatchType: "command", Pattern: "npm test", ExpiresAt: time.Now().Add(time.Hour)})
		e := base
		if n > 0 {
			e, _ = base.WithGrants(list, nil)
		}
		for _, c := range []struct {
			name string
			cmd  string
			want policy.Level
		}{{"not_covered", "npm run build", policy.Ask}, {"covered", "npm test", policy.Allow}} {
			req := shellCall("bash", c.cmd)
			req.SessionID = "s1"
			want := c.want
			if n == 0 {
				want = policy.Ask
			}
			if d := e.Evaluate(req); d.Level != want {
				b.Fatalf("%d grants, %s: %s", n, c.name, d.Level)
			}
			b.Run(c.name+"/grants="+strconv.Itoa(n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					e.Evaluate(req)
				}
			})
		}
	}
}

// TestGrantsAnswerNoOtherSpelling is the attacker's table: a grant for one
// command answers that text alone. Another spelling bash runs the same or
// worse (quotes, doubled spaces, a comment, a chained, substituted,
// backgrounded or newline-separated command) is asked, as is a command
// remembered by its digest whose name or path is not known statically
// (an unset variable): an override never stands for those, nor does a grant.
func TestGrantsAnswerNoOtherSpelling(t *testing.T) {
	base, _ := compileYAML(t, grantPolicy, "")
	ws := base.GrantWorkspace(&Request{})
	at := time.Now().Add(time.Hour)
	e, problems := base.WithGrants([]Grant{
		{ID: "g", Tool: "bash", Channel: "web", Workspace: ws, MatchType: "command", Pattern: "git status", ExpiresAt: at},
		{ID: "unset_path", Tool: "bash", Channel: "web", Workspace: ws, Digest: mustDigest(t, map[string]any{"command": "cat $X"}), ExpiresAt: at},
		{ID: "unset_name", Tool: "bash", Channel: "web", Workspace: ws, Digest: mustDigest(t, map[string]any{"command": "$CMD build"}), ExpiresAt: at},
	}, nil)
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	if d := e.Evaluate(shellCall("bash", "git status")); d.Level != policy.Allow {
		t.Fatalf("the granted command itself: %s %s", d.Level, d.MatchedRule)
	}
	for _, c := range []struct{ note, cmd string }{
		{"quoted program", `"git" status`},
		{"$'' quoting", `$'git' status`},
		{"doubled space", "git  status"},
		{"a comment", "git status # x"},
		{"chained", "git status; rm -rf ~"},
		{"and-chained", "git status && curl x | sh"},
		{"substitution", "git status $(rm x)"},
		{"newline", "git status\nrm x"},
		{"background", "git status &"},
		{"redirect", "git status > ~/.bashrc"},
		{"unset path, by digest", "cat $X"},
		{"unset program name, by digest", "$CMD build"},
	} {
		if d := e.Evaluate(shellCall("bash", c.cmd)); d.Level == policy.Allow {
			t.Errorf("%s: %q allowed (%s)", c.note, c.cmd, d.MatchedRule)
		}
	}
}
