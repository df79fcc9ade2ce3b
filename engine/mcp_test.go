package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// mcpCall is a call of an MCP tool with the given arguments.
func mcpCall(tool string, args map[string]any) *Request {
	return &Request{Call: NewCall(tool, args), ChannelID: "web"}
}

// TestMCPToolRules: a rule naming mcp__SERVER__* covers every tool of that
// server and no other, beside rules naming one tool, in file order; path
// rules (match_type: path or none) match an MCP tool's path values.
func TestMCPToolRules(t *testing.T) {
	e, problems := compileYAML(t, `
schema: tiered_policy
defaults: {"*": ask}
rules:
  - {id: fs_secrets, tools: ["mcp__fs__*"], match_type: path, pattern: "/ws/project/secrets/**", action: deny}
  - {id: fs_src, tools: ["mcp__fs__*"], pattern: "/ws/project/src/**", action: allow}
  - {id: fs_read_docs, tools: [mcp__fs__read_file], match_type: path, pattern: "/ws/project/docs/**", action: allow}
  - {id: gh_issue, tools: [mcp__github__get_issue, read_file], pattern: "/ws/project/issues/**", action: allow}
`, "")
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	runDecisionCases(t, e, []decisionCase{
		{"a server rule covers a tool no rule names", mcpCall("mcp__fs__list_directory", map[string]any{"path": "/ws/project/src/a"}), policy.Allow, "tiered_policy:rules:rules[fs_src]"},
		{"a server rule covers a tool another rule names", mcpCall("mcp__fs__read_file", map[string]any{"path": "/ws/project/src/a.go"}), policy.Allow, "tiered_policy:rules:rules[fs_src]"},
		{"the named tool's own rule", mcpCall("mcp__fs__read_file", map[string]any{"path": "/ws/project/docs/x.md"}), policy.Allow, "tiered_policy:rules:rules[fs_read_docs]"},
		{"the named rule is not the server's", mcpCall("mcp__fs__write_file", map[string]any{"path": "/ws/project/docs/x.md"}), policy.Ask, "tiered_policy:defaults.*"},
		{"a server deny beats a named allow", mcpCall("mcp__fs__read_file", map[string]any{"path": "/ws/project/secrets/docs/k"}), policy.Deny, "tiered_policy:rules:deny:rules[fs_secrets]"},
		{"a nested path value meets the path rule", mcpCall("mcp__fs__read_multiple_files", map[string]any{"paths": []any{"/ws/project/src/a", "/ws/project/secrets/k"}}), policy.Deny, "tiered_policy:rules:deny:rules[fs_secrets]"},
		{"another server's tool is not covered", mcpCall("mcp__fs2__read_file", map[string]any{"path": "/ws/project/src/a"}), policy.Ask, "tiered_policy:defaults.*"},
		{"a server whose name extends it is not covered", mcpCall("mcp__f__s__read", map[string]any{"path": "/ws/project/src/a"}), policy.Ask, "tiered_policy:defaults.*"},
		{"a tool named with another tool in one rule", mcpCall("mcp__github__get_issue", map[string]any{"path": "/ws/project/issues/1"}), policy.Allow, "tiered_policy:rules:rules[gh_issue]"},
		{"the non-MCP tool of the same rule", pathCall("read_file", "/ws/project/issues/1"), policy.Allow, "tiered_policy:rules:rules[gh_issue]"},
		{"a path tool is not an MCP server's", pathCall("read_file", "/ws/project/src/a"), policy.Ask, "tiered_policy:defaults.*"},
	})
}

// TestMCPToolNames: a rule may name an MCP tool only as mcp__SERVER__TOOL or
// mcp__SERVER__*; any other mcp__ name is reported on the rule's tools and
// the rule is skipped.
func TestMCPToolNames(t *testing.T) {
	cases := []struct {
		note, tool, want string
	}{
		{"one tool", "mcp__fs__read_file", ""},
		{"every tool of a server", "mcp__fs__*", ""},
		{"a tool part holding __", "mcp__fs__a__b", ""},
		{"a server with a dash and a dot", "mcp__my-srv.v2__x", ""},
		{"no tool part", "mcp__fs", "write mcp__SERVER__TOOL"},
		{"an empty tool part", "mcp__fs__", "write mcp__SERVER__TOOL"},
		{"an empty server", "mcp____x", "write mcp__SERVER__TOOL"},
		{"a wildcard inside the tool part", "mcp__fs__read_*", "only a whole tool part *"},
		{"a question mark in the tool part", "mcp__fs__read?", "only a whole tool part *"},
		{"a wildcard server", "mcp__*__read_file", "server name"},
		{"every server", "mcp__*", "write mcp__SERVER__TOOL"},
		{"white space in the tool", "mcp__fs__read file", "only a whole tool part *"},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			_, problems := compileYAML(t, "schema: tiered_policy\nrules:\n  - {id: r, tools: [\""+c.tool+"\"], pattern: /x, action: deny}\n", "")
			got := ""
			for _, p := range problems {
				if p.Path == "permissions.rules[0].tools" {
					got = p.Message
				}
			}
			if c.want == "" && len(problems) > 0 || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("problems %v; want one on permissions.rules[0].tools saying %q", problems, c.want)
			}
			fe := CheckRule(&policyRule{Tools: []string{c.tool}, Pattern: "/x"})
			if (fe == nil) != (c.want == "") || fe != nil && (fe.Field != "tools" || !strings.Contains(fe.Message, c.want)) {
				t.Errorf("CheckRule: %v; want %q on tools", fe, c.want)
			}
		})
	}
}

// TestArgsRules: a match_type: args rule matches the canonical JSON of the
// arguments; its hit joins the others of its set, so a deny (or ask) rule
// that matches the call wins over an allow args rule, and the workspace
// check still applies.
func TestArgsRules(t *testing.T) {
	e, problems := compileYAML(t, `
schema: tiered_policy
defaults: {"*": ask}
rules:
  - {id: q_select, tools: ["mcp__db__*"], match_type: args, pattern: '{"query":"select *"}', action: allow}
  - {id: q_drop, tools: ["mcp__db__*"], match_type: args, pattern: 're:(?i)\bdrop\s+table\b', action: deny}
  - {id: fs_any, tools: [mcp__fs__read_file], match_type: args, pattern: '{"path":"*"}', action: allow}
  - {id: fs_secrets, tools: ["mcp__fs__*"], match_type: path, pattern: "/ws/project/secrets/**", action: deny}
  - {id: fs_env_ask, tools: [mcp__fs__read_file], pattern: "**/.env", action: ask}
  - {id: bash_ls, tools: [bash], match_type: args, pattern: '{"command":"ls *"}', action: allow}
  - {id: fetch_intranet, tools: [mcp_fetch_webpage], match_type: args, pattern: '*"url":"https://intranet.example/*', action: deny}
  - {id: win, tools: [mcp__win__open], match_type: args, pattern: '{"name":"a\\*"}', action: allow}
`, `
- {id: no_ssh, tools: [read_file, mcp__fs__read_file], pattern: "**/.ssh/**", action: deny}
`)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	q := func(s string) map[string]any { return map[string]any{"query": s} }
	runDecisionCases(t, e, []decisionCase{
		{"an allow args glob", mcpCall("mcp__db__run", q("select name from users")), policy.Allow, "tiered_policy:rules:rules[q_select]"},
		{"a deny args regex", mcpCall("mcp__db__run", q("DROP TABLE users")), policy.Deny, "tiered_policy:rules:deny:rules[q_drop]"},
		{"deny and allow args rules both match", mcpCall("mcp__db__run", q("select 1; drop table users")), policy.Deny, "tiered_policy:rules:deny:rules[q_drop]"},
		{"another member is not covered by an allow glob", mcpCall("mcp__db__run", map[string]any{"query": "select 1", "database": "prod"}), policy.Ask, "tiered_policy:defaults.*"},
		{"an allow glob does not cross a JSON escape", mcpCall("mcp__db__run", q(`select "x"`)), policy.Ask, "tiered_policy:defaults.*"},
		{"an allow args rule under a deny path rule", mcpCall("mcp__fs__read_file", map[string]any{"path": "/ws/project/secrets/k"}), policy.Deny, "tiered_policy:rules:deny:rules[fs_secrets]"},
		{"an allow args rule under an ask path rule", mcpCall("mcp__fs__read_file", map[string]any{"path": "/ws/project/.env"}), policy.Ask, "tiered_policy:rules:rules[fs_env_ask]"},
		{"an allow args rule under a built-in deny", mcpCall("mcp__fs__read_file", map[string]any{"path": "/ws/project/.ssh/id"}), policy.Deny, "tiered_policy:builtin:deny:builtin[no_ssh]"},
		{"an allow args rule alone", mcpCall("mcp__fs__read_file", map[string]any{"path": "/ws/project/a.txt"}), policy.Allow, "tiered_policy:rules:rules[fs_any]"},
		{"an allow args rule and a path outside the workspace", mcpCall("mcp__fs__read_file", map[string]any{"path": "/etc/hosts"}), policy.Ask, "tiered_policy:rules:rules[fs_any]|external_directory.*"},
		{"a shell tool's args", shellCall("bash", "ls -la"), policy.Allow, "tiered_policy:rules:rules[bash_ls]"},
		{"a shell tool's args with an operator", shellCall("bash", "ls && rm -rf x"), policy.Ask, "tiered_policy:defaults.*"},
		{"a network tool's args", mcpCall("mcp_fetch_webpage", map[string]any{"url": "https://intranet.example/hr"}), policy.Deny, "tiered_policy:rules:deny:rules[fetch_intranet]"},
		{"a network tool's other args", mcpCall("mcp_fetch_webpage", map[string]any{"url": "https://example.com/"}), policy.Ask, "tiered_policy:defaults.*"},
		{"a backslash kept in an args glob", mcpCall("mcp__win__open", map[string]any{"name": `a\b`}), policy.Allow, "tiered_policy:rules:rules[win]"},
		{"a slash is not a backslash", mcpCall("mcp__win__open", map[string]any{"name": `a/b`}), policy.Ask, "tiered_policy:defaults.*"},
		{"arguments JSON cannot write: deny and ask rules hit", mcpCall("mcp__db__run", map[string]any{"query": "select 1", "n": math.NaN()}), policy.Deny, "tiered_policy:rules:deny:rules[q_drop]"},
	})
}

// TestArgsRuleChecks: match_type args is checked like any rule; an approval
// override may not be one (it would bypass the path checks an override
// gets); a network tool's args rule is fine.
func TestArgsRuleChecks(t *testing.T) {
	_, problems := compileYAML(t, `
schema: tiered_policy
rules:
  - {id: a, tools: [mcp_fetch_webpage], match_type: args, pattern: '*', action: ask}
  - {id: b, tools: [mcp_fetch_webpage], pattern: '*', action: ask}
  - {id: c, tools: ["mcp__x__*"], match_type: args, pattern: 're:(', action: ask}
approval_overrides:
  - {id: o, tools: [mcp__x__y], match_type: args, pattern: '{}', action: allow}
`, "")
	want := map[string]string{
		"permissions.rules[1].tools":                   "never match",
		"permissions.rules[2].pattern":                 "invalid regular expression",
		"permissions.approval_overrides[0].match_type": "never args",
	}
	for _, p := range problems {
		if w, ok := want[p.Path]; ok && strings.Contains(p.Message, w) {
			delete(want, p.Path)
			continue
		}
		t.Errorf("unexpected problem %s: %s", p.Path, p.Message)
	}
	for path, w := range want {
		t.Errorf("no problem on %s saying %q", path, w)
	}
	if fe := CheckRule(&policyRule{Tools: []string{"mcp_fetch_webpage"}, Pattern: "*", MatchType: "args"}); fe != nil {
		t.Errorf("CheckRule of a network args rule: %v", fe)
	}
}

// TestCanonicalArgs: keys sorted at every depth, no white space, no HTML
// escaping.
func TestCanonicalArgs(t *testing.T) {
	cases := []struct {
		note string
		args map[string]any
		want string
	}{
		{"none", nil, "{}"},
		{"empty", map[string]any{}, "{}"},
		{"keys sorted", map[string]any{"b": 1.0, "a": "x"}, `{"a":"x","b":1}`},
		{"nested", map[string]any{"z": map[string]any{"y": []any{true, nil}, "x": 2.5}}, `{"z":{"x":2.5,"y":[true,null]}}`},
		{"no HTML escapes", map[string]any{"q": "a<b && c>d"}, `{"q":"a<b && c>d"}`},
		{"quotes and backslashes escaped", map[string]any{"q": `a"b\c`}, `{"q":"a\"b\\c"}`},
		{"non-ASCII kept", map[string]any{"q": "日本"}, `{"q":"日本"}`},
	}
	for _, c := range cases {
		got, err := CanonicalArgs(c.args)
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.note, got, err, c.want)
		}
	}
}

// policyRule is the decoded rule CheckRule takes.
type policyRule = policy.Rule

// TestMCPIndexMatchesScanOnRandomPolicies: with rules naming MCP tools,
// every tool of a server and args rules, the index (the server lists, the
// args prefilter) finds exactly the hits of the plain in-order scan, on
// random policies and calls, and decides alike.
func TestMCPIndexMatchesScanOnRandomPolicies(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 2026))
	tools := []string{"mcp__fs__read", "mcp__fs__write", "mcp__fs__*", "mcp__db__query", "mcp__db__*", "mcp__f__s__x", "read_file"}
	values := []string{"/srv/a", "/srv/secret/k", "select 1", "drop table t", "SELECT <x> & y", `C:\x`, "ok", ""}
	patterns := []string{`{"path":"*"}`, `{"q":"select *"}`, `re:(?i)drop\s+table`, `*secret*`, "/srv/**", `re:"q":"[^"]*<`, `{"path":"/srv/a"}`, "*", `re:^\{"path":"C:\\\\`}
	calls := []string{"mcp__fs__read", "mcp__fs__write", "mcp__fs__list", "mcp__db__query", "mcp__db__other", "mcp__f__s__x", "mcp__fsx__read", "read_file"}
	for p := 0; p < 400; p++ {
		var rules, builtinRules []any
		for i, n := 0, r.IntN(14); i < n; i++ {
			rule := map[string]any{"id": fmt.Sprintf("r%d", i), "pattern": patterns[r.IntN(len(patterns))],
				"action": []string{"allow", "ask", "deny"}[r.IntN(3)]}
			named := []any{tools[r.IntN(len(tools))]}
			if r.IntN(3) == 0 {
				named = append(named, tools[r.IntN(len(tools))])
			}
			rule["tools"] = named
			if r.IntN(2) == 0 {
				rule["match_type"] = "args"
			}
			if r.IntN(5) == 0 {
				builtinRules = append(builtinRules, rule)
			} else {
				rules = append(rules, rule)
			}
		}
		e, _ := Compile(map[string]any{"schema": "tiered_policy", "rules": rules, "defaults": map[string]any{"*": "ask"}},
			builtinRules, Options{Workspace: "/srv", HomeDir: "/home/u"})
		plain := plainEngine(e)
		for c := 0; c < 8; c++ {
			args := map[string]any{}
			for k, n := 0, r.IntN(3); k < n; k++ {
				args[[]string{"path", "q", "n"}[r.IntN(3)]] = values[r.IntN(len(values))]
			}
			checkAgainstScan(t, "random MCP", e, plain, mcpCall(calls[r.IntN(len(calls))], args))
		}
		if t.Failed() {
			t.Fatalf("policy %d: rules %v builtin %v", p, rules, builtinRules)
		}
	}
}

// BenchmarkRulesOf: the lookup of a tool's rules: a tool a rule names, an
// MCP tool only its server's rules cover (one map lookup more), and a tool
// no rule covers.
func BenchmarkRulesOf(b *testing.B) {
	e, _ := compileYAML(b, `
schema: tiered_policy
rules:
  - {id: a, tools: [mcp__fs__read, bash], pattern: /x, action: deny}
  - {id: b, tools: ["mcp__db__*"], pattern: /x, action: deny}
`, "")
	idx := &e.policy.user
	for _, tool := range []string{"bash", "mcp__fs__read", "mcp__db__query", "mcp__gh__issue", "read_file"} {
		b.Run(tool, func(b *testing.B) {
			for b.Loop() {
				_ = idx.rulesOf(tool)
			}
		})
	}
}
