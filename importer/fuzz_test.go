package importer

import (
	"encoding/json"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/toolgate/toolgate/engine"
)

// FuzzEntries converts arbitrary Claude Code entries, opencode patterns
// and Gemini CLI names, prefixes and regexps: no panic, and whatever is carried over compiles in the real
// engine without a problem (a regexp that does not compile, an unknown
// tool), since an inert imported rule would silently decide nothing.
func FuzzEntries(f *testing.F) {
	for _, s := range []string{"Bash(git push:*)", "Read(./secrets/**)", "Edit(//tmp/[a-z]?.txt)", "WebFetch(domain:example.com)",
		"mcp__github__*", "Read(~/a\\b[!c]d)", "Bash(a?b\\c*)", "Edit(/src/**/x[)", "Write(*.env)"} {
		f.Add(s, "git * main")
	}
	f.Fuzz(func(t *testing.T, entry, pattern string) {
		settings, _ := json.Marshal(map[string]any{"permissions": map[string]any{"allow": []string{entry}, "deny": []string{entry}, "ask": []string{entry}}})
		oc, _ := json.Marshal(map[string]any{"permission": map[string]any{
			"bash": map[string]string{"*": "ask", pattern: "allow"}, "edit": map[string]string{pattern: "deny"}, "webfetch": map[string]string{pattern: "allow"}}})
		gem, _ := toml.Marshal(map[string]any{"rule": []map[string]any{
			{"mcpName": entry, "toolName": pattern, "decision": "allow"},
			{"commandPrefix": pattern, "decision": "deny"},
			{"toolName": entry, "decision": "ask_user"},
			{"commandRegex": entry, "decision": "deny"}}})
		for _, convert := range []func() (*Result, error){
			func() (*Result, error) { return Gemini(gem) },
			func() (*Result, error) { return ClaudeCode(settings, sampleOpts) },
			func() (*Result, error) { return Opencode(oc, sampleOpts) },
		} {
			r, err := convert()
			if err != nil {
				continue
			}
			text, err := r.YAML()
			if err != nil {
				t.Fatal(err)
			}
			perms := map[string]any{"schema": "tiered_policy"}
			var rules []any
			for _, rule := range r.Rules {
				rules = append(rules, map[string]any{"id": rule.ID, "tools": toAny(rule.Tools), "match_type": rule.MatchType, "pattern": rule.Pattern, "action": rule.Action})
			}
			perms["rules"] = rules
			if _, problems := engine.Compile(perms, []any{}, engine.Options{}); len(problems) > 0 {
				t.Fatalf("%v\n%s", problems, text)
			}
		}
	})
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
