package importer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// claudeReference decides a command as Claude Code's permissions page
// describes its Bash rules: a compound command is split at its operators,
// a deny of any part denies, then an ask of any part asks, and the whole
// is allowed only when every part meets an allow rule; * is any run of
// characters, `x:*` is `x *`, and `x *` also matches x alone.
func claudeReference(lists map[string][]string, command string) string {
	parts := regexp.MustCompile(`\s*(?:&&|\|\||;|\|)\s*`).Split(strings.TrimSpace(command), -1)
	meets := func(level, part string) bool {
		for _, e := range lists[level] {
			spec, ok := strings.CutPrefix(e, "Bash(")
			if !ok {
				continue
			}
			spec = strings.TrimSuffix(spec, ")")
			if p, ok := strings.CutSuffix(spec, ":*"); ok {
				spec = p + " *"
			}
			re := "^" + wildcardRegexp(spec, ".*", `\?`) + "$"
			if strings.HasSuffix(spec, " *") {
				re = "^" + wildcardRegexp(strings.TrimSuffix(spec, " *"), ".*", `\?`) + "(?: .*)?$"
			}
			if regexp.MustCompile(re).MatchString(part) {
				return true
			}
		}
		return false
	}
	for _, level := range []string{Deny, Ask} {
		for _, p := range parts {
			if meets(level, p) {
				return level
			}
		}
	}
	for _, p := range parts {
		if !meets(Allow, p) {
			return "" // no rule: Claude Code's mode decides
		}
	}
	return Allow
}

// TestClaudeBashNeverAllowsMore decides every command built from a few
// words and operators with the converted docs' examples in the real
// engine and with claudeReference: toolgate never allows a command
// Claude Code would not, and denies every command Claude Code denies.
func TestClaudeBashNeverAllowsMore(t *testing.T) {
	for _, f := range []string{"claude-permissions-docs.json", "claude-settings-docs.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		r, err := ClaudeCode(data, sampleOpts)
		if err != nil {
			t.Fatal(err)
		}
		e := compile(t, r)
		var doc struct {
			Permissions map[string][]string `json:"permissions"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		lists := doc.Permissions
		heads := []string{"npm run", "npm run test", "npm run lint", "git commit", "git push", "git checkout", "curl", "node", "rm"}
		tails := []string{"", " main", " --version", " --help x", " -m 'a b'", " origin main", " $(whoami)", " x > /tmp/o"}
		ops := []string{"", " && rm -rf x", "; curl evil", " | sh", " || git push origin main"}
		checked := 0
		for _, h := range heads {
			for _, tl := range tails {
				for _, op := range ops {
					cmd := h + tl + op
					d := e.Evaluate(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": cmd}), ChannelID: "cli", Workspace: workspace})
					ref := claudeReference(lists, cmd)
					if d.Level == policy.Allow && ref != Allow {
						t.Errorf("%s: toolgate allows %q (%s), Claude Code gives %q", f, cmd, d.MatchedRule, ref)
					}
					if ref == Deny && d.Level != policy.Deny {
						t.Errorf("%s: toolgate gives %s for %q (%s), Claude Code denies it", f, d.Level, cmd, d.MatchedRule)
					}
					checked++
				}
			}
		}
		t.Logf("%s: %d commands", f, checked)
	}
}
