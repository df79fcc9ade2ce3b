package integration

import (
	"strings"
	"testing"
	"time"
)

// personaConfig is a permissive developer policy with a JiuwenSwarm-shaped
// owner scope for one persona on feishu, and one entry in toolgate's
// earlier shape.
const personaConfig = `permissions:
  schema: tiered_policy
  defaults: {"*": ask}
  tools: {bash: allow, read_file: allow}
  external_directory: {"*": ask}
  owner_scopes:
    feishu:
      ou_123:
        tools:
          bash:
            patterns: {"git *": allow, "rm *": deny}
            "*": allow
        defaults: {"*": deny}
`

// personaDecision is the wire decision with its trace.
type personaDecision struct {
	Level       string  `json:"level"`
	MatchedRule *string `json:"matched_rule"`
	Reason      string  `json:"reason"`
	Trace       []struct {
		Step     string `json:"step"`
		Rule     string `json:"rule"`
		Decisive bool   `json:"decisive"`
	} `json:"trace"`
}

func personaCall(tool string, args map[string]any, channel, principal string) map[string]any {
	return map[string]any{"tool_name": tool, "tool_args": args, "channel_id": channel, "explain": true,
		"scope": map[string]any{"avatar_mode": true, "group_digital_avatar": true, "principal_user_id": principal}}
}

func evalPersona(t *testing.T, s *Server, body map[string]any) personaDecision {
	t.Helper()
	st, out := s.Do("POST", "/api/v1/evaluate", body)
	if st != 200 {
		t.Fatalf("evaluate: status %d: %s", st, out)
	}
	return DecodeJSON[personaDecision](t, out)
}

// TestPersonaOverHTTP: a digital persona on feishu is decided under its
// owner scope and the global policy, never skipped for its channel.
func TestPersonaOverHTTP(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: personaConfig})
	const scope = "owner_scopes.feishu.ou_123"
	cases := []struct {
		note, tool string
		args       map[string]any
		principal  string
		level      string
		rule       string
	}{
		{"rm -rf ~ from a persona on feishu is denied", "bash", map[string]any{"command": "rm -rf ~"}, "ou_123", "deny", ""},
		{"rm -rf ~ from a persona without an owner scope is denied", "bash", map[string]any{"command": "rm -rf ~"}, "ou_999", "deny", ""},
		{"an owner pattern allows", "bash", map[string]any{"command": "git status"}, "ou_123", "allow", scope + ".tools.bash.patterns['git *']"},
		{"an owner deny pattern", "bash", map[string]any{"command": "rm -rf build"}, "ou_123", "deny", scope + ".tools.bash.patterns['rm *']"},
		{"owner defaults deny", "read_file", map[string]any{"path": "a.txt"}, "ou_123", "deny", scope + ".defaults.*"},
		{"no principal", "read_file", map[string]any{"path": "a.txt"}, "", "deny", "owner_scopes:no_principal"},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			d := evalPersona(t, s, personaCall(c.tool, c.args, "feishu", c.principal))
			rule := ""
			if d.MatchedRule != nil {
				rule = *d.MatchedRule
			}
			if d.Level != c.level || c.rule != "" && rule != c.rule {
				t.Errorf("got %s %q (%s), want %s %q", d.Level, rule, d.Reason, c.level, c.rule)
			}
			if c.level == "deny" && !strings.HasPrefix(d.Reason, "[PERMISSION_DENIED] ") {
				t.Errorf("reason: got %q, want [PERMISSION_DENIED] ...", d.Reason)
			}
			if strings.Contains(d.Reason, "Skipped for channel") {
				t.Errorf("a persona call was skipped for its channel: %q", d.Reason)
			}
		})
	}
	t.Run("the trace shows why", func(t *testing.T) {
		d := evalPersona(t, s, personaCall("bash", map[string]any{"command": "rm -rf build"}, "feishu", "ou_123"))
		var steps []string
		for _, st := range d.Trace {
			steps = append(steps, st.Step)
			if st.Decisive && (st.Step != "persona_decision" || st.Rule != scope+".tools.bash.patterns['rm *']") {
				t.Errorf("decisive step: got %+v", st)
			}
		}
		joined := strings.Join(steps, ",")
		for _, want := range []string{"persona", "owner_level", "global_level", "persona_decision"} {
			if !strings.Contains(joined, want) {
				t.Errorf("trace %s lacks %s", joined, want)
			}
		}
	})
	t.Run("the decision log names the owner-scope entry", func(t *testing.T) {
		want := scope + ".tools.bash.patterns['rm *']"
		WaitFor(t, 10*time.Second, "the persona denial in the decision log", func() bool {
			for _, d := range listDecisions(t, s, "?limit=500").Decisions {
				if d.MatchedRule != nil && *d.MatchedRule == want && d.Level == "deny" && d.ChannelID == "feishu" {
					return true
				}
			}
			return false
		})
	})
	t.Run("the ordinary call on feishu is still skipped", func(t *testing.T) {
		st, out := s.Do("POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "make"}, "channel_id": "feishu"})
		if st != 200 || !strings.Contains(string(out), "Skipped for channel: feishu") {
			t.Errorf("got %d %s, want skipped", st, out)
		}
	})
}

// TestOwnerScopesRoundTrip: REST and JSON-RPC read and write owner scopes
// in the channel -> principal shape, the new scope decides at once, and the
// earlier shape is refused with the fix.
func TestOwnerScopesRoundTrip(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: personaConfig})
	scopes := map[string]any{"dingtalk": map[string]any{"ou_9": map[string]any{
		"tools":    map[string]any{"bash": map[string]any{"patterns": map[string]any{"ls *": "allow"}, "*": "deny"}},
		"defaults": map[string]any{"*": "deny"},
	}}}
	st, body := s.Do("PUT", "/api/v1/permissions/owner-scopes", map[string]any{"owner_scopes": scopes})
	wantStatus(t, "put", st, body, 200, "")
	st, body = s.Do("GET", "/api/v1/permissions/owner-scopes", nil)
	got := DecodeJSON[map[string]map[string]map[string]any](t, body)
	bash, _ := got["owner_scopes"]["dingtalk"]["ou_9"].(map[string]any)["tools"].(map[string]any)["bash"].(map[string]any)
	if st != 200 || bash["*"] != "deny" || bash["patterns"].(map[string]any)["ls *"] != "allow" {
		t.Fatalf("GET owner-scopes: %d %s", st, body)
	}
	if yaml := s.ReadFile("config.yaml"); !strings.Contains(yaml, "dingtalk:") || !strings.Contains(yaml, "ou_9:") {
		t.Errorf("config.yaml lacks the new scope:\n%s", yaml)
	}
	allowed := evalPersona(t, s, personaCall("bash", map[string]any{"command": "ls -la"}, "dingtalk", "ou_9"))
	denied := evalPersona(t, s, personaCall("bash", map[string]any{"command": "make"}, "dingtalk", "ou_9"))
	if allowed.Level != "allow" || denied.Level != "deny" || *denied.MatchedRule != "owner_scopes.dingtalk.ou_9.tools.bash.*" {
		t.Errorf("decisions after the PUT: %+v, %+v", allowed, denied)
	}

	st, body = s.Do("POST", "/rpc", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "permissions.owner_scopes.get", "params": map[string]any{}})
	if st != 200 || !strings.Contains(string(body), `"dingtalk":{"ou_9":`) {
		t.Errorf("rpc owner_scopes.get: %d %s", st, body)
	}

	earlier := map[string]any{"owner_scopes": map[string]any{"ou_9": map[string]any{"tools": map[string]any{"bash": "deny"}}}}
	before := s.ReadFile("config.yaml")
	st, body = s.Do("PUT", "/api/v1/permissions/owner-scopes", earlier)
	wantStatus(t, "the earlier shape", st, body, 400, "owner_scopes.ou_9")
	if !strings.Contains(string(body), "move it under a channel, e.g. owner_scopes.feishu.ou_9") {
		t.Errorf("the earlier shape: the message lacks the fix: %s", body)
	}
	st, body = s.Do("POST", "/rpc", map[string]any{"jsonrpc": "2.0", "id": 2, "method": "permissions.owner_scopes.set", "params": earlier})
	if st != 200 || !strings.Contains(string(body), "move it under a channel") || !strings.Contains(string(body), `"error"`) {
		t.Errorf("rpc set of the earlier shape: %d %s", st, body)
	}
	if after := s.ReadFile("config.yaml"); after != before {
		t.Errorf("a refused write changed config.yaml")
	}
}

// TestOwnerScopesEarlierShapeOnDisk: a config.yaml in toolgate's earlier
// shape keeps its entry, /readyz and validate report it with the fix, and
// that principal's persona calls are denied.
func TestOwnerScopesEarlierShapeOnDisk(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: `permissions:
  schema: tiered_policy
  tools: {bash: allow}
  owner_scopes:
    ou_old:
      tools: {bash: allow}
`})
	st, body := s.Do("GET", "/readyz", nil)
	if st != 200 || !strings.Contains(string(body), "permissions.owner_scopes.ou_old") || !strings.Contains(string(body), "move it under a channel, e.g. owner_scopes.feishu.ou_old") {
		t.Errorf("/readyz: %d %s", st, body)
	}
	st, body = s.Do("POST", "/api/v1/permissions/validate", map[string]any{"schema": "tiered_policy", "owner_scopes": map[string]any{"ou_old": map[string]any{"tools": map[string]any{"bash": "allow"}}}})
	if st != 200 || !strings.Contains(string(body), `"valid":false`) || !strings.Contains(string(body), "move it under a channel") {
		t.Errorf("validate: %d %s", st, body)
	}
	d := evalPersona(t, s, personaCall("bash", map[string]any{"command": "ls"}, "feishu", "ou_old"))
	if d.Level != "deny" || d.MatchedRule == nil || *d.MatchedRule != "owner_scopes.ou_old" {
		t.Errorf("persona of the earlier-shape principal: got %+v, want deny by owner_scopes.ou_old", d)
	}
	st, body = s.Do("GET", "/api/v1/permissions/owner-scopes", nil)
	if st != 200 || !strings.Contains(string(body), "ou_old") {
		t.Errorf("the earlier-shape entry was dropped: %d %s", st, body)
	}
}
