package integration

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// wrappedServer is one server entry as setup rewrote it.
type wrappedServer struct {
	argv    []string
	env     map[string]string
	envVars []string // Codex: variables passed on from its own environment
	allowed []string // Gemini: variables its redaction lets through
}

// readWrapped reads the fs server of an agent's rewritten file.
func readWrapped(t *testing.T, agent, path string) wrappedServer {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		MCPServers map[string]struct {
			Command string            `json:"command" toml:"command"`
			Args    []string          `json:"args" toml:"args"`
			Env     map[string]string `json:"env" toml:"env"`
			EnvVars []string          `json:"-" toml:"env_vars"`
		} `json:"mcpServers" toml:"mcp_servers"`
		Security struct {
			Redaction struct {
				Allowed []string `json:"allowed"`
			} `json:"environmentVariableRedaction"`
		} `json:"security"`
	}
	if agent == "codex" {
		err = toml.Unmarshal(data, &doc)
	} else {
		err = json.Unmarshal(data, &doc)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	fs, ok := doc.MCPServers["fs"]
	if !ok {
		t.Fatalf("%s lost the fs server:\n%s", path, data)
	}
	return wrappedServer{argv: append([]string{fs.Command}, fs.Args...), env: fs.Env, envVars: fs.EnvVars, allowed: doc.Security.Redaction.Allowed}
}

// redacted is Gemini CLI 0.61's rule for the variables it keeps from a
// stdio MCP server (names holding TOKEN, KEY, SECRET...), unless its
// settings allow them: read from its bundle and checked against the real
// CLI, whose MCP server saw $TOOLGATE_TOKEN only with the allowance.
var redacted = regexp.MustCompile(`(?i)TOKEN|SECRET|PASSWORD|PASSWD|KEY|AUTH|CREDENTIAL|CREDS|PRIVATE|CERT`)

// serverEnv is the environment each agent starts a stdio server with,
// given its own: Claude Code passes all of it, Codex a fixed few names and
// env_vars, Gemini CLI all but the redacted names; then the entry's env.
func serverEnv(agent string, own map[string]string, s wrappedServer) []string {
	env := map[string]string{}
	for k, v := range own {
		switch agent {
		case "codex":
			if k == "PATH" || k == "HOME" || containsName(s.envVars, k) {
				env[k] = v
			}
		case "gemini":
			if !redacted.MatchString(k) || containsName(s.allowed, k) {
				env[k] = v
			}
		default:
			env[k] = v
		}
	}
	for k, v := range s.env {
		env[k] = v
	}
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func containsName(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// startArgv starts a server's command line as an MCP client would and
// initializes the session.
func startArgv(t *testing.T, argv, env []string) *mcpClient {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &mcpClient{t: t, in: in, out: bufio.NewScanner(out), cmd: cmd}
	c.out.Buffer(make([]byte, 1<<20), 16<<20)
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	init := c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "toolgate-test", "version": "1"}})
	if !strings.Contains(string(init["result"]), "serverInfo") {
		t.Fatalf("initialize through the wrapped command: %s %s", init["result"], init["error"])
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

// TestSetupMCPWrapsTheFilesystemServer configures the real
// @modelcontextprotocol/server-filesystem in each agent's own file, runs
// `toolgate setup <agent> --mcp` on a fresh home, and starts the command
// line the rewritten file now holds, with the environment that agent
// gives its servers: it is this toolgate in front of the real server, it
// answers initialize, an allowed read returns the file and a denied write
// never reaches it. Claude Code itself then connects through it (claude
// mcp list), and cannot without its token.
func TestSetupMCPWrapsTheFilesystemServer(t *testing.T) {
	server := agentBinary(t, "server-filesystem")
	s := StartServer(t, ServerOptions{})
	root := filepath.Join(s.Workspace, "files")
	canary := filepath.Join(root, "canary.txt")
	writeFile(t, canary, "the canary lives\n")
	for tool, level := range map[string]string{"mcp__fs__read_text_file": "allow", "mcp__fs__write_file": "deny"} {
		if st, _, body := s.Call(s.Token, "PUT", "/api/v1/permissions/tools/"+tool, map[string]any{"level": level}, nil); st != 200 {
			t.Fatalf("set %s: %d %s", tool, st, body)
		}
	}
	token := createToken(t, s, "mcp-setup-agent", "agent")
	quoted, _ := json.Marshal([]string{server, root})
	cases := []struct {
		note, agent, file, content string
	}{
		{note: "claude code, ~/.claude.json", agent: "claude-code", file: ".claude.json",
			content: `{"mcpServers": {"fs": {"type": "stdio", "command": "node", "args": ` + string(quoted) + `, "env": {"FS_NOTE": "kept"}}}}`},
		{note: "codex, config.toml", agent: "codex", file: ".codex/config.toml",
			content: "# mine\n[mcp_servers.fs]\ncommand = \"node\"\nargs = " + string(quoted) + "\nenv = { FS_NOTE = \"kept\" }\n"},
		{note: "gemini, settings.json", agent: "gemini", file: ".gemini/settings.json",
			content: `{"mcpServers": {"fs": {"command": "node", "args": ` + string(quoted) + `, "env": {"FS_NOTE": "kept"}}}}`},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			home := t.TempDir()
			writeFile(t, filepath.Join(home, c.file), c.content)
			r := runCLIEnv(t, home, []string{"HOME=" + home, "TOOLGATE_URL=" + s.URL}, "setup", c.agent, "--mcp")
			if r.code != 0 || !strings.Contains(r.stdout, "wrapped") {
				t.Fatalf("setup --mcp: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			w := readWrapped(t, c.agent, filepath.Join(home, c.file))
			if w.argv[0] != toolgateCLI(t) || w.argv[1] != "mcp" || w.env["FS_NOTE"] != "kept" {
				t.Fatalf("the wrapped server runs %q with env %v, want this toolgate's mcp and its env kept", w.argv, w.env)
			}
			own := map[string]string{"PATH": os.Getenv("PATH"), "HOME": home, "TOOLGATE_TOKEN": token}
			mc := startArgv(t, w.argv, serverEnv(c.agent, own, w))
			if text, isErr := mc.call("read_text_file", map[string]any{"path": canary}); isErr || !strings.Contains(text, "the canary lives") {
				t.Errorf("an allowed read through the wrapped server: %q (error %v)", text, isErr)
			}
			if text, isErr := mc.call("write_file", map[string]any{"path": canary, "content": "overwritten"}); !isErr || !strings.Contains(text, "mcp__fs__write_file") {
				t.Errorf("a write denied as mcp__fs__write_file answered %q (error %v)", text, isErr)
			}
			if b, _ := os.ReadFile(canary); string(b) != "the canary lives\n" {
				t.Fatalf("the denied write reached the server: the canary holds %q", b)
			}
		})
	}
	t.Run("claude code connects through it", func(t *testing.T) {
		claude := agentBinary(t, "claude-code")
		home := t.TempDir()
		writeFile(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"fs": {"type": "stdio", "command": "node", "args": `+string(quoted)+`}}}`)
		if r := runCLIEnv(t, home, []string{"HOME=" + home, "TOOLGATE_URL=" + s.URL}, "setup", "claude-code", "--mcp"); r.code != 0 {
			t.Fatalf("setup --mcp: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		for _, withToken := range []bool{true, false} {
			cmd := exec.Command(claude, "mcp", "list")
			cmd.Dir = home
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
			if withToken {
				cmd.Env = append(cmd.Env, "TOOLGATE_TOKEN="+token)
			}
			out, _ := cmd.CombinedOutput()
			line := ""
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, "fs: ") {
					line = l
				}
			}
			if !strings.Contains(line, toolgateCLI(t)+" mcp --name fs") {
				t.Fatalf("claude mcp list does not show the wrapped server:\n%s", out)
			}
			if connected := strings.Contains(line, "Connected") && !strings.Contains(line, "Failed"); connected != withToken {
				t.Errorf("with the token %v, claude mcp list says: %s", withToken, line)
			}
		}
	})
}
