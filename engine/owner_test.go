package engine

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// personaPolicy is a tiered policy with JiuwenSwarm-shaped owner scopes
// (docs/decisions.md#digital-persona-and-owner-scopes).
const personaPolicy = `schema: tiered_policy
defaults: {"*": ask}
tools: {read_file: allow, bash: allow, write_file: ask, edit_file: allow, mcp_fetch_webpage: allow}
rules:
  - {id: g_push, tools: [bash], pattern: "git push *", action: deny}
external_directory: {"*": ask}
owner_scopes:
  feishu:
    ou_123:
      tools:
        bash:
          patterns: {"git *": allow, "rm *": deny, "re:curl .*evil": ask}
          "*": allow
        read_file: deny
        edit_file: {patterns: {"**/.ssh/**": deny}}
        mcp_fetch_webpage: {patterns: {"*.example.com": allow}, "*": deny}
      defaults: {"*": allow}
  dingtalk:
    ou_123:
      defaults: {"*": deny}
`

// persona makes req a digital-persona call of principal on channel.
func persona(req *Request, channel, principal string) *Request {
	req.ChannelID = channel
	req.Scope = &Scope{AvatarMode: true, GroupDigitalAvatar: true, PrincipalUserID: principal}
	return req
}

func urlCall(u string) *Request {
	return &Request{Call: NewCall("mcp_fetch_webpage", map[string]any{"url": u})}
}

// TestPersonaRules covers each rule of docs/decisions.md#digital-persona-and-owner-scopes on a
// JiuwenSwarm-shaped owner scope.
func TestPersonaRules(t *testing.T) {
	e, problems := compileYAML(t, personaPolicy, "")
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	const s = "owner_scopes.feishu.ou_123"
	runDecisionCases(t, e, []decisionCase{
		{"a persona call ignores channel gating", persona(shellCall("bash", "ls"), "feishu", "ou_123"), policy.Allow, s + ".tools.bash.*"},
		{"a patterns entry that matches a command decides first", persona(shellCall("bash", "git status"), "feishu", "ou_123"), policy.Allow, s + ".tools.bash.patterns['git *']"},
		{"a deny pattern decides", persona(shellCall("bash", "rm -rf build"), "feishu", "ou_123"), policy.Deny, s + ".tools.bash.patterns['rm *']"},
		{"a deny pattern also matches the normalized command (D6)", persona(shellCall("bash", `\rm -rf build`), "feishu", "ou_123"), policy.Deny, s + ".tools.bash.patterns['rm *']"},
		{"a deny pattern also matches the program by its base name (D6)", persona(shellCall("bash", "/bin/rm -rf build"), "feishu", "ou_123"), policy.Deny, s + ".tools.bash.patterns['rm *']"},
		{"a deny pattern also matches the command a wrapper runs (D6)", persona(shellCall("bash", "env rm -rf build"), "feishu", "ou_123"), policy.Deny, s + ".tools.bash.patterns['rm *']"},
		{"a deny pattern also matches the command behind timeout's operand (D6)", persona(shellCall("bash", "timeout 5 rm -rf build"), "feishu", "ou_123"), policy.Deny, s + ".tools.bash.patterns['rm *']"},
		{"a deny pattern also matches a cmd argv array (D6)", persona(&Request{Call: NewCall("bash", map[string]any{"cmd": []any{"rm", "-rf", "build"}})}, "feishu", "ou_123"), policy.Deny, s + ".tools.bash.patterns['rm *']"},
		{"owner ask becomes deny", persona(shellCall("bash", "curl http://evil"), "feishu", "ou_123"), policy.Deny, s + ".tools.bash.patterns['re:curl .*evil']"},
		{"the stricter global level decides over an owner allow", persona(shellCall("bash", "git push origin main"), "feishu", "ou_123"), policy.Deny, "tiered_policy:rules:deny:rules[g_push]"},
		{"patterns without a match fall to the tool's *", persona(shellCall("bash", "make"), "feishu", "ou_123"), policy.Allow, s + ".tools.bash.*"},
		{"a tool's plain level", persona(pathCall("read_file", "a.txt"), "feishu", "ou_123"), policy.Deny, s + ".tools.read_file"},
		{"a path pattern matches the path as a path", persona(pathCall("edit_file", "/ws/project/.ssh/config"), "feishu", "ou_123"), policy.Deny, s + ".tools.edit_file.patterns['**/.ssh/**']"},
		{"a path deny pattern matches the resolved path (D6)", persona(pathCall("edit_file", "/ws/project/x/../.ssh/config"), "feishu", "ou_123"), policy.Deny, s + ".tools.edit_file.patterns['**/.ssh/**']"},
		{"a path deny pattern matches a nested path value (D6)", persona(&Request{Call: NewCall("edit_file", map[string]any{"edits": []any{map[string]any{"file_path": "/ws/project/.ssh/config"}}})}, "feishu", "ou_123"), policy.Deny, s + ".tools.edit_file.patterns['**/.ssh/**']"},
		{"a tool entry without * and no matching pattern falls to defaults", persona(pathCall("edit_file", "src/a.go"), "feishu", "ou_123"), policy.Allow, s + ".defaults.*"},
		{"a url pattern matches the host name", persona(urlCall("https://docs.example.com/guide"), "feishu", "ou_123"), policy.Allow, s + ".tools.mcp_fetch_webpage.patterns['*.example.com']"},
		{"a url with user info gives an allow pattern no host", persona(urlCall("https://docs.example.com@evil.org/"), "feishu", "ou_123"), policy.Deny, s + ".tools.mcp_fetch_webpage.*"},
		{"a url on another host falls to the tool's *", persona(urlCall("https://evil.org/"), "feishu", "ou_123"), policy.Deny, s + ".tools.mcp_fetch_webpage.*"},
		{"the global ask beats an owner allow and becomes deny", persona(pathCall("write_file", "a.txt"), "feishu", "ou_123"), policy.Deny, "tools.write_file"},
		{"owner scopes are keyed by channel, then principal", persona(shellCall("bash", "ls"), "dingtalk", "ou_123"), policy.Deny, "owner_scopes.dingtalk.ou_123.defaults.*"},
		{"the channel id is stripped", persona(shellCall("bash", "ls"), " dingtalk ", "ou_123"), policy.Deny, "owner_scopes.dingtalk.ou_123.defaults.*"},
		{"no owner scope for the principal: the global level", persona(shellCall("bash", "ls"), "feishu", "ou_999"), policy.Allow, "tools.bash"},
		{"no owner scope for the principal: ask becomes deny", persona(pathCall("write_file", "a.txt"), "feishu", "ou_999"), policy.Deny, "tools.write_file"},
		{"no owner scope on another channel", persona(shellCall("bash", "rm -rf build"), "slack", "ou_123"), policy.Allow, "tools.bash"},
		{"the external-directory merge is part of the global level", persona(shellCall("bash", "rm -rf ~"), "feishu", "ou_999"), policy.Deny, "tools.bash|external_directory.*"},
		{"empty principal denies every call", persona(pathCall("read_file", "a.txt"), "feishu", " "), policy.Deny, RuleNoPrincipal},
		{"avatar_mode alone is not a persona call", &Request{Call: NewCall("bash", map[string]any{"command": "rm -rf ~"}), ChannelID: "feishu", Scope: &Scope{AvatarMode: true, PrincipalUserID: "ou_123"}}, policy.Allow, ""},
		{"group_digital_avatar alone is not a persona call", &Request{Call: NewCall("bash", map[string]any{"command": "make"}), ChannelID: "web", Scope: &Scope{GroupDigitalAvatar: true, PrincipalUserID: "ou_123"}}, policy.Allow, "tools.bash"},
	})

	t.Run("rm -rf ~ from a persona is never allowed", func(t *testing.T) {
		// The owner pattern rm * or the external merge may decide, depending
		// on how far the shell analysis expands ~; either way it is a deny.
		for _, cmd := range []string{"rm -rf ~", "rm -rf $HOME", `\rm -rf ~/`, "cd / && rm -rf ~"} {
			if d := e.Evaluate(persona(shellCall("bash", cmd), "feishu", "ou_123")); d.Level != policy.Deny {
				t.Errorf("%s: got %s %q, want deny", cmd, d.Level, d.MatchedRule)
			}
		}
	})
	t.Run("deny reason is [PERMISSION_DENIED] and the default guidance", func(t *testing.T) {
		d := e.Evaluate(persona(pathCall("read_file", "a.txt"), "feishu", "ou_123"))
		if want := "[PERMISSION_DENIED] 该工具未被授权使用。请在 Web 管理页面配置工具权限。"; d.Reason != want {
			t.Errorf("got %q, want %q", d.Reason, want)
		}
	})
	t.Run("allow reason names the rule", func(t *testing.T) {
		d := e.Evaluate(persona(shellCall("bash", "git status"), "feishu", "ou_123"))
		if want := "Allowed by rule: " + s + ".tools.bash.patterns['git *']"; d.Reason != want {
			t.Errorf("got %q, want %q", d.Reason, want)
		}
	})
	t.Run("empty principal has its own reason", func(t *testing.T) {
		d := e.Evaluate(persona(pathCall("read_file", "a.txt"), "feishu", ""))
		if want := "[PERMISSION_DENIED] 数字分身未配置 my_user_id，无法确定权限 owner，所有工具调用被拒绝。"; d.Reason != want {
			t.Errorf("got %q, want %q", d.Reason, want)
		}
	})
	t.Run("a persona call is not skipped on its channel", func(t *testing.T) {
		ordinary := e.Evaluate(&Request{Call: NewCall("bash", map[string]any{"command": "rm -rf build"}), ChannelID: "feishu"})
		if ordinary.Reason != "Skipped for channel: feishu" {
			t.Fatalf("ordinary call on feishu: got %q, want skipped", ordinary.Reason)
		}
	})
}

// TestPersonaGuidanceAndSwitch: the deny_guidance_message, the master
// switch, the legacy schema, no owner_scopes (D3) and no configuration.
func TestPersonaGuidanceAndSwitch(t *testing.T) {
	off, _ := compileYAML(t, `enabled: false
schema: tiered_policy
deny_guidance_message: "  Ask the owner in person.  "
tools: {bash: allow}
owner_scopes: {feishu: {ou_1: {tools: {bash: deny}}}}`, "")
	d := off.Evaluate(persona(shellCall("bash", "ls"), "feishu", "ou_1"))
	if d.Level != policy.Deny || d.MatchedRule != "owner_scopes.feishu.ou_1.tools.bash" {
		t.Errorf("a persona call ignores the master switch: got %s %q", d.Level, d.MatchedRule)
	}
	if want := "[PERMISSION_DENIED] Ask the owner in person."; d.Reason != want {
		t.Errorf("deny_guidance_message: got %q, want %q", d.Reason, want)
	}

	d3, _ := compileYAML(t, "schema: tiered_policy\ndefaults: {\"*\": ask}\ntools: {read_file: allow}", "")
	runDecisionCases(t, d3, []decisionCase{
		{"D3: no owner_scopes, the global allow stands", persona(pathCall("read_file", "a.txt"), "feishu", "u1"), policy.Allow, "tools.read_file"},
		{"D3: no owner_scopes, the global ask becomes deny", persona(pathCall("edit_file", "a.txt"), "feishu", "u1"), policy.Deny, "tiered_policy:defaults.*"},
	})
	empty, _ := compileYAML(t, "schema: tiered_policy\ntools: {read_file: allow}\nowner_scopes: {}", "")
	runDecisionCases(t, empty, []decisionCase{
		{"D3: an empty owner_scopes counts as none", persona(pathCall("edit_file", "a.txt"), "feishu", "u1"), policy.Deny, "default"},
	})

	noConfig, _ := compileYAML(t, "schema: tiered_policy\nowner_scopes: {feishu: {u1: {tools: {custom: allow}, defaults: {\"*\": deny}}}}", "")
	runDecisionCases(t, noConfig, []decisionCase{
		{"no configuration for the call gives no global level: the owner allow decides", persona(&Request{Call: NewCall("custom", nil)}, "feishu", "u1"), policy.Allow, "owner_scopes.feishu.u1.tools.custom"},
		{"no configuration for the call and no owner scope: denied", persona(&Request{Call: NewCall("custom", nil)}, "dingtalk", "u1"), policy.Deny, "default"},
		{"no configuration for the call: the owner deny decides", persona(&Request{Call: NewCall("other", nil)}, "feishu", "u1"), policy.Deny, "owner_scopes.feishu.u1.defaults.*"},
	})

	legacy, _ := compileYAML(t, `defaults: {"*": ask}
tools:
  bash: {"*": allow, patterns: {"re:^rm ": deny}}
external_directory: allow
owner_scopes: {dingtalk: {u1: {tools: {bash: allow}}}}`, "")
	runDecisionCases(t, legacy, []decisionCase{
		{"legacy schema: the global pattern deny decides", persona(shellCall("bash", "rm -rf x"), "dingtalk", "u1"), policy.Deny, "tools.bash.patterns['re:^rm ']"},
		{"legacy schema: owner and global allow", persona(shellCall("bash", "make"), "dingtalk", "u1"), policy.Allow, "owner_scopes.dingtalk.u1.tools.bash"},
	})
}

// TestOwnerScopeValidation: the earlier shape and broken entries are
// reported and fail closed.
func TestOwnerScopeValidation(t *testing.T) {
	e, problems := compileYAML(t, `schema: tiered_policy
tools: {bash: allow, read_file: allow}
owner_scopes:
  ou_old:
    tools: {bash: deny}
    defaults: {"*": ask}
  feishu:
    ou_caps: {tools: {bash: Allow}}
    ou_null: {tools: {bash: null}}
    ou_list: [bash]
    ou_badtools: {tools: [bash]}
    ou_badre: {tools: {bash: {patterns: {"re:(": deny}, "*": allow}}}
    ou_extra: {tools: {bash: allow}, mode: strict}`, "")
	want := map[string]string{
		"permissions.owner_scopes.ou_old":                                      "move it under a channel, e.g. owner_scopes.feishu.ou_old",
		"permissions.owner_scopes.feishu.ou_caps.tools.bash":                   "invalid owner-scope level",
		"permissions.owner_scopes.feishu.ou_null.tools.bash":                   "must be a level or a mapping",
		"permissions.owner_scopes.feishu.ou_list":                              "must be a mapping with tools",
		"permissions.owner_scopes.feishu.ou_badtools.tools":                    "must be a mapping of tool name",
		`permissions.owner_scopes.feishu.ou_badre.tools.bash.patterns["re:("]`: "never matches",
		"permissions.owner_scopes.feishu.ou_extra.mode":                        "unknown key",
	}
	got := map[string]string{}
	for _, p := range problems {
		got[p.Path] = p.Message
	}
	for path, frag := range want {
		if !strings.Contains(got[path], frag) {
			t.Errorf("problem at %s: got %q, want it to contain %q (all: %v)", path, got[path], frag, problems)
		}
	}
	runDecisionCases(t, e, []decisionCase{
		{"an entry in the earlier shape denies its principal on any channel", persona(pathCall("read_file", "a.txt"), "feishu", "ou_old"), policy.Deny, "owner_scopes.ou_old"},
		{"an invalid owner level denies", persona(shellCall("bash", "ls"), "feishu", "ou_caps"), policy.Deny, "owner_scopes.feishu.ou_caps.tools.bash"},
		{"a null tool entry denies", persona(shellCall("bash", "ls"), "feishu", "ou_null"), policy.Deny, "owner_scopes.feishu.ou_null.tools.bash"},
		{"a scope that is not a mapping denies", persona(shellCall("bash", "ls"), "feishu", "ou_list"), policy.Deny, "owner_scopes.feishu.ou_list"},
		{"tools that are not a mapping deny", persona(shellCall("bash", "ls"), "feishu", "ou_badtools"), policy.Deny, "owner_scopes.feishu.ou_badtools"},
		{"a pattern that does not compile never matches", persona(shellCall("bash", "ls"), "feishu", "ou_badre"), policy.Allow, "owner_scopes.feishu.ou_badre.tools.bash.*"},
		{"an unknown key is ignored", persona(shellCall("bash", "ls"), "feishu", "ou_extra"), policy.Allow, "owner_scopes.feishu.ou_extra.tools.bash"},
	})
}

// TestPersonaTrace: the explain trace shows persona detection, the owner
// level, the global level and the combination, which alone is decisive.
func TestPersonaTrace(t *testing.T) {
	e, _ := compileYAML(t, personaPolicy, "")
	req := persona(shellCall("bash", "git push origin main"), "feishu", "ou_123")
	req.Explain = true
	d := e.Evaluate(req)
	var names []string
	decisive := ""
	for _, s := range d.Trace {
		names = append(names, s.Name)
		if s.Decisive {
			decisive += s.Name
		}
	}
	joined := strings.Join(names, ",")
	for _, want := range []string{"persona,owner_level,baseline", "user_hits", "global_level,persona_decision"} {
		if !strings.Contains(joined, want) {
			t.Errorf("trace %s lacks %s", joined, want)
		}
	}
	if decisive != "persona_decision" {
		t.Errorf("decisive: got %q, want persona_decision", decisive)
	}
	last := d.Trace[len(d.Trace)-1]
	if last.Rule != "tiered_policy:rules:deny:rules[g_push]" || !strings.Contains(last.Detail, "global") {
		t.Errorf("combination step: got %+v", last)
	}
	if owner := d.Trace[1]; owner.Result != "allow" || owner.Rule != "owner_scopes.feishu.ou_123.tools.bash.patterns['git *']" {
		t.Errorf("owner step: got %+v", owner)
	}
}

// TestApprovalOverrideJoin: every matching approval override is named,
// sorted and joined with + (docs/decisions.md).
func TestApprovalOverrideJoin(t *testing.T) {
	e, _ := compileYAML(t, `schema: tiered_policy
defaults: {"*": ask}
external_directory: allow
approval_overrides:
  - {id: zz, tools: [bash], match_type: command, pattern: "git status *", action: allow}
  - {id: aa, tools: [bash], match_type: command, pattern: "git *", action: allow}
  - {id: mm, tools: [bash], match_type: command, pattern: "git status", action: allow}
  - {id: rx, tools: [bash], match_type: command, pattern: "re:^make", action: allow}
  - {id: p1, tools: [read_file], match_type: path, pattern: "/data/**", action: allow}
  - {id: p0, tools: [read_file], match_type: path, pattern: "/data/x", action: allow}`, "")
	const base = "tiered_policy:approval_overrides:"
	runDecisionCases(t, e, []decisionCase{
		{"one matching override keeps its own name", shellCall("bash", "git log"), policy.Allow, base + "approval_overrides[aa]"},
		{"several matching overrides are sorted and joined with +", shellCall("bash", "git status"), policy.Allow, base + "approval_overrides[aa]+approval_overrides[mm]+approval_overrides[zz]"},
		{"two of three", shellCall("bash", "git status -s"), policy.Allow, base + "approval_overrides[aa]+approval_overrides[zz]"},
		{"path overrides join too", pathCall("read_file", "/data/x"), policy.Allow, base + "approval_overrides[p0]+approval_overrides[p1]"},
	})
	req := shellCall("bash", "git status")
	req.Explain = true
	d := e.Evaluate(req)
	for _, s := range d.Trace {
		if s.Name == "approval_overrides" && len(s.Hits) != 3 {
			t.Errorf("trace hits: got %v, want the three overrides", s.Hits)
		}
	}
}

// TestExplainTrace: explain lists the steps and marks one as decisive.
func TestExplainTrace(t *testing.T) {
	e, _ := compileYAML(t, tieredPolicy, tieredBuiltin)
	req := shellCall("bash", "npm install x && cat /etc/hosts")
	req.Explain = true
	d := e.Evaluate(req)
	decisive := 0
	names := map[string]bool{}
	for _, s := range d.Trace {
		names[s.Name] = true
		if s.Decisive {
			decisive++
		}
	}
	if decisive != 1 {
		t.Errorf("decisive steps: got %d, want 1 (%+v)", decisive, d.Trace)
	}
	for _, want := range []string{"baseline", "builtin_hits", "user_hits", "approval_overrides", "finalize", "shell"} {
		if !names[want] {
			t.Errorf("trace lacks step %q: %+v", want, d.Trace)
		}
	}
	req.Explain = false
	if d := e.Evaluate(req); d.Trace != nil {
		t.Errorf("no explain: got a trace")
	}
}

// TestReadmePersonaExample keeps the README's owner-scopes example honest.
func TestReadmePersonaExample(t *testing.T) {
	e, problems := compileYAML(t, `schema: tiered_policy
defaults: {"*": ask}
tools: {bash: allow, read_file: allow, mcp_fetch_webpage: allow}
deny_guidance_message: "请联系本人在 Web 管理页面授权。"
owner_scopes:
  feishu:
    ou_7d8a6e6df7621556:
      tools:
        bash:
          patterns: {"git status *": allow, "git log *": allow, "rm *": deny}
          "*": deny
        read_file: allow
        mcp_fetch_webpage: {patterns: {"*.feishu.cn": allow}, "*": deny}
      defaults: {"*": deny}
  dingtalk:
    manager1234:
      defaults: {"*": deny}`, "")
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	const s = "owner_scopes.feishu.ou_7d8a6e6df7621556"
	p := func(r *Request) *Request { return persona(r, "feishu", "ou_7d8a6e6df7621556") }
	runDecisionCases(t, e, []decisionCase{
		{"git status is allowed by its pattern", p(shellCall("bash", "git status")), policy.Allow, s + ".tools.bash.patterns['git status *']"},
		{"make is denied by the tool's *", p(shellCall("bash", "make")), policy.Deny, s + ".tools.bash.*"},
		{"write_file is denied by the defaults", p(pathCall("write_file", "a.txt")), policy.Deny, s + ".defaults.*"},
		{"a feishu page is fetched", p(urlCall("https://open.feishu.cn/doc")), policy.Allow, s + ".tools.mcp_fetch_webpage.patterns['*.feishu.cn']"},
		{"another site is not", p(urlCall("https://example.org/")), policy.Deny, s + ".tools.mcp_fetch_webpage.*"},
	})
	if d := e.Evaluate(p(shellCall("bash", "rm -rf ~"))); d.Level != policy.Deny || d.Reason != "[PERMISSION_DENIED] 请联系本人在 Web 管理页面授权。" {
		t.Errorf("rm -rf ~: got %s %q", d.Level, d.Reason)
	}
}

// TestOwnerDenyPatternForms: a deny pattern matches what the call touches,
// however it is written (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm): a path word of the command resolved
// against workdir, a home-relative path, a nested value.
func TestOwnerDenyPatternForms(t *testing.T) {
	e, _ := compileYAML(t, `schema: tiered_policy
tools: {bash: allow, read_file: allow, custom: allow}
external_directory: allow
owner_scopes:
  feishu:
    u1:
      tools:
        bash: {patterns: {"re:^/etc/": deny}, "*": allow}
        read_file: {patterns: {"/home/u/.ssh/**": deny}, "*": allow}
        custom: {patterns: {"re:DROP TABLE": deny}, "*": allow}`, "")
	const s = "owner_scopes.feishu.u1.tools."
	runDecisionCases(t, e, []decisionCase{
		{"a path word resolved against workdir", persona(&Request{Call: NewCall("bash", map[string]any{"command": "cat shadow", "workdir": "/etc"})}, "feishu", "u1"), policy.Deny, s + "bash.patterns['re:^/etc/']"},
		{"a path word of a quoted command", persona(shellCall("bash", `cat "/etc/shadow"`), "feishu", "u1"), policy.Deny, s + "bash.patterns['re:^/etc/']"},
		{"a home-relative path", persona(pathCall("read_file", "~/.ssh/id_rsa"), "feishu", "u1"), policy.Deny, s + "read_file.patterns['/home/u/.ssh/**']"},
		{"a nested string value", persona(&Request{Call: NewCall("custom", map[string]any{"q": map[string]any{"sql": []any{"DROP TABLE users"}}})}, "feishu", "u1"), policy.Deny, s + "custom.patterns['re:DROP TABLE']"},
		{"nothing matches: the tool's *", persona(shellCall("bash", "ls src"), "feishu", "u1"), policy.Allow, s + "bash.*"},
	})
}
