package engine

import (
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestAgentSettingsAsk checks that the default built-in rules ask before
// any door to an agent's own settings, hooks or MCP servers, or to
// toolgate's config, under a policy that allows everything else: an agent
// that could write there could switch the gate off
// (docs/decisions.md#agent-settings-ask). The ordinary calls beside them
// stay allowed, so "ask everything" fails this test too.
func TestAgentSettingsAsk(t *testing.T) {
	e := builtinOnlyEngine(t)
	write := func(path string) *Request { return writeCall(path, "{}") }
	edit := editCall
	held := []struct {
		note string
		req  *Request
	}{
		// Claude Code rewrote its own settings to {} and switched toolgate off
		// (observed with Claude Code 2.1.328 in bypassPermissions mode).
		{"Write to the project's Claude Code settings", write("/ws/project/.claude/settings.json")},
		{"Write to the user's Claude Code settings", write("/home/u/.claude/settings.json")},
		{"Edit of Claude Code's local settings", edit("/ws/project/.claude/settings.local.json")},
		{"a Claude Code skill (its frontmatter can carry hooks)", write("/ws/project/.claude/skills/x/SKILL.md")},
		{"Claude Code's MCP servers and trust", edit("/home/u/.claude.json")},
		{"Codex's hooks", write("/home/u/.codex/hooks.json")},
		{"Codex's config (approval policy, hook trust)", edit("/home/u/.codex/config.toml")},
		{"Gemini CLI's settings", write("/ws/project/.gemini/settings.json")},
		{"Gemini CLI's trusted folders", write("/home/u/.gemini/trustedFolders.json")},
		// CurXecute, CVE-2025-54135: a prompt made Cursor write .cursor/mcp.json.
		{"Cursor's MCP servers", write("/ws/project/.cursor/mcp.json")},
		// CVE-2025-53773: Copilot set chat.tools.autoApprove in .vscode/settings.json.
		{"VS Code settings (auto-approval)", edit("/ws/project/.vscode/settings.json")},
		{"a project's MCP servers", write("/ws/project/.mcp.json")},
		{"opencode's config", write("/ws/project/opencode.json")},
		{"opencode's user config", write("/home/u/.config/opencode/opencode.json")},
		{"toolgate's default config dir", edit("/home/u/.jiuwenswarm/config/config.yaml")},
		{"toolgate's admin token", write("/srv/toolgate/api_token")},
		{"a relative path", write(".claude/settings.json")},
		{"upper case on a case-insensitive disk", write("/ws/project/.Claude/settings.json")},
		{"a redirect", shellCall("bash", "echo '{}' > .claude/settings.json")},
		{"an append through ~", shellCall("bash", `echo '{"disableAllHooks":true}' >> ~/.claude/settings.json`)},
		{"sed -i", shellCall("bash", "sed -i 's/toolgate/true/' ~/.codex/hooks.json")},
		{"cp over it", shellCall("bash", "cp /tmp/empty.json .gemini/settings.json")},
		{"mv it away", shellCall("bash", "mv .claude .claude.off")},
		{"tee", shellCall("bash", "printf '{}' | tee $HOME/.claude/settings.json")},
		{"ln over it", shellCall("bash", "ln -sf /dev/null ~/.codex/hooks.json")},
		{"rm it", shellCall("bash", "rm -rf ~/.gemini")},
		{"a quoted path", shellCall("bash", `python3 -c "open('.claude/settings.json','w').write('{}')"`)},
		{"through cd", shellCall("bash", "cd ~/.codex && echo x > hooks.json")},
		{"a glob that names it", shellCall("bash", "rm -rf ~/.claude*")},
		{"git checkout of the settings", shellCall("bash", "git checkout HEAD~3 -- .claude/settings.json")},
		{"toolgate's token by name", shellCall("bash", "cat ~/.jiuwenswarm/config/api_token")},
		{"VS Code auto-approval via jq", shellCall("bash", `jq '.["chat.tools.autoApprove"]=true' .vscode/settings.json > t && mv t .vscode/settings.json`)},
		{"an MCP server added with a heredoc", shellCall("bash", "cat > .mcp.json <<'EOF'\n{\"mcpServers\":{}}\nEOF")},
	}
	for _, c := range held {
		if d := e.Evaluate(c.req); d.Level == policy.Allow {
			t.Errorf("%s: allowed (%s)", c.note, d.MatchedRule)
		}
	}
	benign := []struct {
		note string
		req  *Request
	}{
		{"a source file", write("/ws/project/src/main.go")},
		{"the project's CLAUDE.md memory", edit("/ws/project/CLAUDE.md")},
		{"a file named like a tool", write("/ws/project/docs/claude.md")},
		{"a package with gemini in its name", write("/ws/project/pkg/gemini/client.go")},
		{"a .github workflow", edit("/ws/project/.github/workflows/ci.yml")},
		{"a .vscode launch config", write("/ws/project/.vscode/launch.json")},
		{"ls", shellCall("bash", "ls -la")},
		{"git status", shellCall("bash", "git status --short")},
		{"go test", shellCall("bash", "go test ./...")},
		{"grep over the tree", shellCall("bash", "grep -rn gemini src/")},
		{"a word that only contains claude", shellCall("bash", "echo claude.ai")},
		{"npm install of a gemini package", shellCall("bash", "npm install @google/genai")},
		{"a file ending in .codex", shellCall("bash", "cat notes.codex")},
	}
	for _, c := range benign {
		if d := e.Evaluate(c.req); d.Level != policy.Allow {
			t.Errorf("%s: %s by %s, want allow", c.note, d.Level, d.MatchedRule)
		}
	}
}
