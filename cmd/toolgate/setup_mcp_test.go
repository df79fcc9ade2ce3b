package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// gate is the command line setup puts before a server's own.
var gate = []any{"mcp", "--name", "NAME", "--url", "http://127.0.0.1:8765", "--"}

// gated is a server's wrapped args.
func gated(name string, server ...any) []any {
	out := append([]any{}, gate...)
	out[2] = name
	return append(out, server...)
}

// writeFiles puts files (relative to root) on disk.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// readDoc reads a JSON or TOML file as the agent would.
func readDoc(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{}
	if strings.HasSuffix(path, ".toml") {
		err = toml.Unmarshal(data, &doc)
	} else {
		err = json.Unmarshal(data, &doc)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	return doc
}

// dig follows keys through nested objects.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// claudeJSON is a ~/.claude.json as Claude Code writes it: a user server
// with env, a remote one, and servers of two projects.
const claudeJSON = `{
  "numStartups": 4,
  "mcpServers": {
    "fs": {"type": "stdio", "command": "node", "args": ["/srv/fs.js", "/data"], "env": {"DEBUG": "1"}},
    "web": {"type": "http", "url": "https://mcp.example.com/mcp"}
  },
  "projects": {
    "/work/app": {"allowedTools": [], "mcpServers": {"db": {"type": "stdio", "command": "db-mcp", "args": [], "env": {}}}},
    "/work/other": {"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}
  },
  "oauthAccount": {"emailAddress": "me@example.com"}
}
`

// codexTOML is a Codex config.toml with comments, a server with env and
// one written over several lines, a server without args and a remote one.
const codexTOML = `# my Codex settings
model = "o3" # the default

[mcp_servers.fs]
command = "npx" # the filesystem server
args = [
  "-y", # always the newest
  "@modelcontextprotocol/server-filesystem",
  "/srv",
]
env = { "API_KEY" = "k" }

[mcp_servers.plain]
command = "plain-mcp"
env_vars = ["HOME_TOKEN"]

[mcp_servers.remote]
url = "https://mcp.example.com/mcp" # not started by Codex

[profiles.fast]
model = "o4-mini"
`

// geminiJSON is a Gemini CLI settings.json with a stdio server (cwd, env),
// a Streamable HTTP one and an SSE one.
const geminiJSON = `{"theme": "dark",
 "security": {"folderTrust": {"enabled": true}},
 "mcpServers": {
  "git": {"command": "uvx", "args": ["mcp-server-git"], "cwd": "./repo", "env": {"GIT_TOKEN": "$GH"}, "trust": false},
  "gh": {"httpUrl": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer x"}},
  "old": {"url": "http://localhost:8080/sse"}}}
`

// TestSetupMCPWrapsEachAgentsServers checks, for each agent's format, that
// every stdio server's command becomes toolgate mcp in front of its own
// command line, under the agent's own name, with its env and every other
// key kept, that remote servers are left as they are and named in the
// output with the reason, and that the gateway gets its token.
func TestSetupMCPWrapsEachAgentsServers(t *testing.T) {
	cases := []struct {
		note  string
		files map[string]string // relative to the home ("proj/" is the project)
		args  []string
		file  string
		want  map[string]any // key path (dotted, / between keys) -> value after
		out   []string
	}{
		{note: "claude code, user: the user's servers and every project's", files: map[string]string{".claude.json": claudeJSON},
			args: []string{"claude-code"}, file: ".claude.json",
			want: map[string]any{
				"mcpServers/fs/command":                       "/opt/toolgate",
				"mcpServers/fs/args":                          gated("fs", "node", "/srv/fs.js", "/data"),
				"mcpServers/fs/env":                           map[string]any{"DEBUG": "1"},
				"mcpServers/fs/type":                          "stdio",
				"mcpServers/web":                              map[string]any{"type": "http", "url": "https://mcp.example.com/mcp"},
				"projects//work/app/mcpServers/db/args":       gated("db", "db-mcp"),
				"projects//work/other/mcpServers/git/command": "/opt/toolgate",
				"numStartups":                                 4.0,
				"oauthAccount/emailAddress":                   "me@example.com",
			},
			out: []string{"mcpServers.fs: wrapped", "- node /srv/fs.js /data", "+ /opt/toolgate mcp --name fs --url http://127.0.0.1:8765 -- node /srv/fs.js /data",
				"mcpServers.web: not wrapped: a remote server (https://mcp.example.com/mcp)", "toolgate mcp --upstream URL --listen ADDR",
				`projects["/work/app"].mcpServers.db: wrapped`, "from Claude Code's environment"}},
		{note: "codex: comments, env and the other tables kept, env_vars passes the token on", files: map[string]string{".codex/config.toml": codexTOML},
			args: []string{"codex"}, file: ".codex/config.toml",
			want: map[string]any{
				"mcp_servers/fs/command":     "/opt/toolgate",
				"mcp_servers/fs/args":        gated("fs", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"),
				"mcp_servers/fs/env":         map[string]any{"API_KEY": "k"},
				"mcp_servers/fs/env_vars":    []any{"TOOLGATE_TOKEN"},
				"mcp_servers/plain/args":     gated("plain", "plain-mcp"),
				"mcp_servers/plain/env_vars": []any{"TOOLGATE_TOKEN", "HOME_TOKEN"},
				"mcp_servers/remote":         map[string]any{"url": "https://mcp.example.com/mcp"},
				"profiles/fast/model":        "o4-mini",
				"model":                      "o3",
			},
			out: []string{"[mcp_servers.fs]: wrapped", "[mcp_servers.remote]: not wrapped: a remote server", "env_vars"}},
		{note: "gemini: cwd, env and trust kept, http and sse servers left, the token allowed through", files: map[string]string{".gemini/settings.json": geminiJSON},
			args: []string{"gemini"}, file: ".gemini/settings.json",
			want: map[string]any{
				"mcpServers/git/command":                        "/opt/toolgate",
				"mcpServers/git/args":                           gated("git", "uvx", "mcp-server-git"),
				"mcpServers/git/cwd":                            "./repo",
				"mcpServers/git/env":                            map[string]any{"GIT_TOKEN": "$GH"},
				"mcpServers/git/trust":                          false,
				"mcpServers/gh/httpUrl":                         "https://api.githubcopilot.com/mcp/",
				"mcpServers/old":                                map[string]any{"url": "http://localhost:8080/sse"},
				"security/folderTrust":                          map[string]any{"enabled": true},
				"security/environmentVariableRedaction/allowed": []any{"TOOLGATE_TOKEN"},
				"theme": "dark",
			},
			out: []string{"mcpServers.gh: not wrapped: a remote server (https://api.githubcopilot.com/mcp/)", "mcpServers.old: not wrapped: a remote server (http://localhost:8080/sse)",
				"security.environmentVariableRedaction.allowed: + TOOLGATE_TOKEN"}},
		{note: "codex with a token file: no env_vars, the gateway reads the file", files: map[string]string{".codex/config.toml": codexTOML},
			args: []string{"codex", "--token-file", "/etc/tg/token", "--wait", "30"}, file: ".codex/config.toml",
			want: map[string]any{
				"mcp_servers/fs/args": []any{"mcp", "--name", "fs", "--url", "http://127.0.0.1:8765", "--token-file", "/etc/tg/token", "--wait", "30",
					"--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"},
				"mcp_servers/fs/env_vars":    nil,
				"mcp_servers/plain/env_vars": []any{"HOME_TOKEN"},
			},
			out: []string{"reads its token from /etc/tg/token"}},
		{note: "claude code, project: its .mcp.json and its own entry in ~/.claude.json only",
			files: map[string]string{".claude.json": claudeJSON, "proj/.mcp.json": `{"mcpServers": {"pj": {"command": "node", "args": ["/z.js"], "env": {"A": "1"}}}}`},
			args:  []string{"claude-code", "--project", "PROJ"}, file: "proj/.mcp.json",
			want: map[string]any{
				"mcpServers/pj/args": gated("pj", "node", "/z.js"),
				"mcpServers/pj/env":  map[string]any{"A": "1"},
			},
			out: []string{"mcpServers.pj: wrapped"}},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			home, getenv := setupEnv(t)
			proj := filepath.Join(home, "proj")
			writeFiles(t, home, c.files)
			_ = os.MkdirAll(proj, 0o700)
			args := append([]string{}, c.args...)
			for i, a := range args {
				if a == "PROJ" {
					args[i] = proj
				}
			}
			code, out, errs := runSetupArgs(getenv, append(args, "--mcp", "--bin", "/opt/toolgate")...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s%s", code, out, errs)
			}
			path := filepath.Join(home, c.file)
			doc := readDoc(t, path)
			for keys, want := range c.want {
				parts := strings.Split(keys, "/")
				if strings.HasPrefix(keys, "projects//") { // a project's key is a path
					rest := strings.SplitN(strings.TrimPrefix(keys, "projects/"), "/mcpServers/", 2)
					parts = append([]string{"projects", rest[0], "mcpServers"}, strings.Split(rest[1], "/")...)
				}
				if got := dig(doc, parts...); !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %#v, want %#v", keys, got, want)
				}
			}
			for _, w := range c.out {
				if !strings.Contains(out, w) {
					t.Errorf("the output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "tg_secret_in_env") || strings.Contains(out, `"k"`) {
				t.Errorf("the output shows a secret:\n%s", out)
			}
			if backups, _ := filepath.Glob(path + ".bak-*"); len(backups) != 1 {
				t.Errorf("backups %v, want one", backups)
			} else if b, _ := os.ReadFile(backups[0]); string(b) != c.files[c.file] {
				t.Errorf("the backup is not the old file:\n%s", b)
			}
		})
	}
}

// TestSetupMCPProjectLeavesTheUsersServers checks that --project touches
// only that project's servers in ~/.claude.json.
func TestSetupMCPProjectLeavesTheUsersServers(t *testing.T) {
	home, getenv := setupEnv(t)
	writeFiles(t, home, map[string]string{".claude.json": strings.ReplaceAll(claudeJSON, "/work/app", filepath.Join(home, "app"))})
	app := filepath.Join(home, "app")
	_ = os.MkdirAll(app, 0o700)
	if code, out, errs := runSetupArgs(getenv, "claude-code", "--mcp", "--project", app, "--bin", "/opt/toolgate"); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	doc := readDoc(t, filepath.Join(home, ".claude.json"))
	cases := []struct {
		note string
		keys []string
		want any
	}{
		{note: "the project's server is wrapped", keys: []string{"projects", app, "mcpServers", "db", "command"}, want: "/opt/toolgate"},
		{note: "the user's server is not", keys: []string{"mcpServers", "fs", "command"}, want: "node"},
		{note: "another project's server is not", keys: []string{"projects", "/work/other", "mcpServers", "git", "command"}, want: "uvx"},
		{note: "the project's other settings stay", keys: []string{"projects", app, "allowedTools"}, want: []any{}},
	}
	for _, c := range cases {
		if got := dig(doc, c.keys...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v = %#v, want %#v", c.note, c.keys, got, c.want)
		}
	}
}

// TestSetupMCPTwiceThenRemove checks, for each agent, that a second run
// changes nothing (not even a backup), that --remove gives back the
// servers as they were (Codex's file byte for byte, comments included),
// and that --dry-run shows the change and writes nothing.
func TestSetupMCPTwiceThenRemove(t *testing.T) {
	cases := []struct {
		note  string
		agent string
		file  string
		old   string
		exact bool
	}{
		{note: "claude code", agent: "claude-code", file: ".claude.json", old: claudeJSON},
		{note: "codex", agent: "codex", file: ".codex/config.toml", old: codexTOML, exact: true},
		{note: "gemini", agent: "gemini", file: ".gemini/settings.json", old: geminiJSON},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			home, getenv := setupEnv(t)
			writeFiles(t, home, map[string]string{c.file: c.old})
			path := filepath.Join(home, c.file)
			run := func(args ...string) string {
				t.Helper()
				code, out, errs := runSetupArgs(getenv, append([]string{c.agent, "--mcp", "--bin", "/opt/toolgate"}, args...)...)
				if code != exitOK {
					t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
				}
				return out
			}
			out := run("--dry-run")
			if data, _ := os.ReadFile(path); string(data) != c.old || !strings.Contains(out, "would write "+path) || !strings.Contains(out, "+ /opt/toolgate mcp") {
				t.Errorf("--dry-run: file changed %v, output:\n%s", string(data) != c.old, out)
			}
			run()
			wrapped, _ := os.ReadFile(path)
			if out := run(); !strings.Contains(out, "nothing to change") || !strings.Contains(out, "already behind toolgate mcp") {
				t.Errorf("a second run says:\n%s", out)
			}
			if again, _ := os.ReadFile(path); string(again) != string(wrapped) {
				t.Errorf("a second run changed the file:\n%s", again)
			}
			if backups, _ := filepath.Glob(path + ".bak-*"); len(backups) != 1 {
				t.Errorf("backups %v after two runs, want one", backups)
			}
			code, out, errs := runSetupArgs(getenv, c.agent, "--remove")
			if code != exitOK || !strings.Contains(out, "still start behind toolgate mcp: toolgate setup "+c.agent+" --mcp --remove") {
				t.Errorf("--remove without --mcp: exit %d\n%s%s\nwant it to name the wrapped servers", code, out, errs)
			}
			if out := run("--remove"); !strings.Contains(out, "unwrapped") {
				t.Errorf("--remove says:\n%s", out)
			}
			after, _ := os.ReadFile(path)
			if c.exact && string(after) != c.old {
				t.Errorf("after --remove:\n%s\nwant the old file:\n%s", after, c.old)
			}
			var want, got map[string]any
			if c.exact {
				_ = toml.Unmarshal([]byte(c.old), &want)
				_ = toml.Unmarshal(after, &got)
			} else {
				_ = json.Unmarshal([]byte(c.old), &want)
				_ = json.Unmarshal(after, &got)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("after --remove:\n%s\nwant the servers as they were:\n%s", after, c.old)
			}
			if out := run("--remove"); !strings.Contains(out, "nothing to change") {
				t.Errorf("a second --remove says:\n%s", out)
			}
		})
	}
}

// TestSetupMCPRefusesWhatItCannotRead checks that a file setup cannot read
// exactly is an error naming it, and that no file at all is changed.
func TestSetupMCPRefusesWhatItCannotRead(t *testing.T) {
	cases := []struct {
		note   string
		agent  string
		files  map[string]string
		stderr string
	}{
		{note: "broken JSON", agent: "claude-code", files: map[string]string{".claude.json": `{"mcpServers": {`}, stderr: "cannot read it as JSON"},
		{note: "mcpServers not an object", agent: "gemini", files: map[string]string{".gemini/settings.json": `{"mcpServers": []}`}, stderr: "mcpServers: not a JSON object"},
		{note: "a key twice", agent: "gemini", files: map[string]string{".gemini/settings.json": `{"mcpServers": {}, "mcpServers": {}}`}, stderr: "appears twice"},
		{note: "broken TOML", agent: "codex", files: map[string]string{".codex/config.toml": "[mcp_servers.fs]\ncommand = \"npx\nargs = []\n"}, stderr: "cannot read it as TOML (line 2"},
		{note: "mcp_servers not a table", agent: "codex", files: map[string]string{".codex/config.toml": "mcp_servers = 3\n"}, stderr: "mcp_servers is not a table"},
		{note: "the project's .mcp.json is fine but ~/.claude.json is not: neither is written", agent: "claude-code",
			files:  map[string]string{"proj/.mcp.json": `{"mcpServers": {"pj": {"command": "node"}}}`, ".claude.json": `{"projects": `},
			stderr: "no file was changed"},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			home, getenv := setupEnv(t)
			writeFiles(t, home, c.files)
			proj := filepath.Join(home, "proj")
			_ = os.MkdirAll(proj, 0o700)
			args := []string{c.agent, "--mcp"}
			if _, ok := c.files["proj/.mcp.json"]; ok {
				args = append(args, "--project", proj)
			}
			code, out, errs := runSetupArgs(getenv, args...)
			if code != exitError || !strings.Contains(errs, c.stderr) {
				t.Errorf("exit %d stdout %q stderr %q; want exit 1 naming %q", code, out, errs, c.stderr)
			}
			for rel, content := range c.files {
				path := filepath.Join(home, rel)
				if data, _ := os.ReadFile(path); string(data) != content {
					t.Errorf("%s changed:\n%s", rel, data)
				}
				if backups, _ := filepath.Glob(path + ".bak-*"); len(backups) != 0 {
					t.Errorf("backups %v", backups)
				}
			}
		})
	}
}

// TestSetupMCPLeavesWhatItCannotWrap checks the entries setup does not
// wrap: each is named with the reason, and the file is not written.
func TestSetupMCPLeavesWhatItCannotWrap(t *testing.T) {
	cases := []struct {
		note    string
		agent   string
		file    string
		content string
		out     string
	}{
		{note: "a codex server written as an inline table", agent: "codex", file: ".codex/config.toml",
			content: "[mcp_servers]\nfs = { command = \"npx\", args = [\"x\"] }\n", out: "[mcp_servers.fs]: not wrapped: setup edits only command, args and env_vars"},
		{note: "a codex server written with dotted keys", agent: "codex", file: ".codex/config.toml",
			content: "mcp_servers.fs.command = \"npx\"\n", out: "not wrapped: setup edits only"},
		{note: "a command that is not a string", agent: "claude-code", file: ".claude.json",
			content: `{"mcpServers": {"fs": {"command": ["npx"]}}}`, out: "mcpServers.fs: not wrapped: its command is not a string"},
		{note: "args that are not strings", agent: "gemini", file: ".gemini/settings.json",
			content: `{"mcpServers": {"fs": {"command": "npx", "args": [1]}}}`, out: "its args are not a list of strings"},
		{note: "an entry with no command", agent: "gemini", file: ".gemini/settings.json",
			content: `{"mcpServers": {"fs": {"timeout": 5}}}`, out: "it names no command"},
		{note: "a server put behind toolgate by hand", agent: "claude-code", file: ".claude.json",
			content: `{"mcpServers": {"fs": {"command": "/usr/bin/toolgate", "args": ["mcp", "--name", "files", "--", "npx", "x"]}}}`, out: "already behind toolgate mcp"},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			home, getenv := setupEnv(t)
			writeFiles(t, home, map[string]string{c.file: c.content})
			code, out, errs := runSetupArgs(getenv, c.agent, "--mcp", "--bin", "/opt/toolgate")
			if code != exitOK || !strings.Contains(out, c.out) || !strings.Contains(out, "nothing to change") {
				t.Errorf("exit %d\n%s%s\nwant %q and nothing to change", code, out, errs, c.out)
			}
			if data, _ := os.ReadFile(filepath.Join(home, c.file)); string(data) != c.content {
				t.Errorf("the file changed:\n%s", data)
			}
		})
	}
}

// TestSetupMCPEditsCodexTextOnlyWhereItMust checks the text of a wrapped
// config.toml: the comments, the layout of a long args list and the
// other keys are where the person left them.
func TestSetupMCPEditsCodexTextOnlyWhereItMust(t *testing.T) {
	home, getenv := setupEnv(t)
	writeFiles(t, home, map[string]string{".codex/config.toml": codexTOML})
	if code, out, errs := runSetupArgs(getenv, "codex", "--mcp", "--bin", "/opt/toolgate"); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	data, _ := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	want := `# my Codex settings
model = "o3" # the default

[mcp_servers.fs]
command = "/opt/toolgate" # the filesystem server
args = ["mcp", "--name", "fs", "--url", "http://127.0.0.1:8765", "--", "npx",
  "-y", # always the newest
  "@modelcontextprotocol/server-filesystem",
  "/srv",
]
env_vars = ["TOOLGATE_TOKEN"]
env = { "API_KEY" = "k" }

[mcp_servers.plain]
command = "/opt/toolgate"
args = ["mcp", "--name", "plain", "--url", "http://127.0.0.1:8765", "--", "plain-mcp"]
env_vars = ["TOOLGATE_TOKEN", "HOME_TOKEN"]

[mcp_servers.remote]
url = "https://mcp.example.com/mcp" # not started by Codex

[profiles.fast]
model = "o4-mini"
`
	if string(data) != want {
		t.Errorf("config.toml:\n%s\nwant:\n%s", data, want)
	}
}

// TestSetupMCPCodexLayoutsRoundTrip checks config.toml layouts people
// write: wrapped, each reads as the gateway in front of the server; taken
// out again, each is the old text (or, where setup writes a value its own
// way, the same document).
func TestSetupMCPCodexLayoutsRoundTrip(t *testing.T) {
	cases := []struct {
		note  string
		toml  string
		name  string
		argv  []any
		exact bool
	}{
		{note: "a comment right after [", toml: "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [ # flags\n  \"-y\", \"x\" ]\n", name: "fs", argv: []any{"npx", "-y", "x"}, exact: true},
		{note: "a quoted name with a dot", toml: "[mcp_servers.\"my.server\"]\ncommand = \"srv\"\nargs = [\"a\"]\n", name: "my.server", argv: []any{"srv", "a"}, exact: true},
		{note: "windows line ends", toml: "# x\r\n[mcp_servers.fs]\r\ncommand = \"npx\"\r\nargs = [\r\n  \"x\",\r\n]\r\n", name: "fs", argv: []any{"npx", "x"}, exact: true},
		{note: "a literal string and an empty args", toml: "[mcp_servers.fs]\ncommand = 'C:\\bin\\srv.exe'\nargs = []\n", name: "fs", argv: []any{`C:\bin\srv.exe`}},
		{note: "env_vars over several lines", toml: "[mcp_servers.fs]\ncommand = \"srv\"\nenv_vars = [\n  \"A\",\n  \"B\",\n]\n", name: "fs", argv: []any{"srv"}, exact: true},
		{note: "the last table, no final newline", toml: "[mcp_servers.fs]\ncommand = \"srv\"", name: "fs", argv: []any{"srv"}},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			home, getenv := setupEnv(t)
			writeFiles(t, home, map[string]string{".codex/config.toml": c.toml})
			path := filepath.Join(home, ".codex", "config.toml")
			if code, out, errs := runSetupArgs(getenv, "codex", "--mcp", "--bin", "/opt/toolgate"); code != exitOK {
				t.Fatalf("wrap: exit %d\n%s%s", code, out, errs)
			}
			doc := readDoc(t, path)
			server := dig(doc, "mcp_servers", c.name).(map[string]any)
			if got, want := server["args"], gated(c.name, c.argv...); !reflect.DeepEqual(got, want) || server["command"] != "/opt/toolgate" {
				t.Errorf("wrapped: %v %#v, want /opt/toolgate %#v", server["command"], got, want)
			}
			if ev, _ := server["env_vars"].([]any); len(ev) == 0 || ev[0] != "TOOLGATE_TOKEN" {
				t.Errorf("env_vars %#v, want TOOLGATE_TOKEN first", server["env_vars"])
			}
			if code, out, errs := runSetupArgs(getenv, "codex", "--mcp", "--remove", "--bin", "/opt/toolgate"); code != exitOK {
				t.Fatalf("unwrap: exit %d\n%s%s", code, out, errs)
			}
			after, _ := os.ReadFile(path)
			var want, got map[string]any
			_ = toml.Unmarshal([]byte(c.toml), &want)
			_ = toml.Unmarshal(after, &got)
			if wantArgs, ok := dig(want, "mcp_servers", c.name, "args").([]any); ok && len(wantArgs) == 0 {
				delete(dig(want, "mcp_servers", c.name).(map[string]any), "args") // an empty args goes with the gateway's words
			}
			if (c.exact && string(after) != c.toml) || !reflect.DeepEqual(got, want) {
				t.Errorf("after --remove:\n%q\nwant:\n%q", after, c.toml)
			}
		})
	}
}
