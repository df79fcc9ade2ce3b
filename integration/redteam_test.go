package integration

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The obfuscation red-team table (engine/testdata/redteam/cases.jsonl) is
// run in engine/redteam_test.go against the compiled engine; here a sample
// of it goes over HTTP to the real binary, with the three policies written
// as config.yaml and the same directory tree on disk, so decoding,
// the store's path resolver and the server's wiring are in the loop.

// redteamSampleEvery takes every n-th row of the table.
const redteamSampleEvery = 3

// redteamRow is the part of a table row this test reads.
type redteamRow struct {
	ID       string         `json:"id"`
	Cause    int            `json:"cause"`
	Policy   string         `json:"policy"`
	ToolName string         `json:"tool_name"`
	ToolArgs map[string]any `json:"tool_args"`
	Max      string         `json:"max"`
	Source   string         `json:"source"`
	Note     string         `json:"note"`
	// OutOfScope rows are reported, not failed (see the engine test).
	OutOfScope string `json:"out_of_scope"`
}

// redteamTree is the directory layout of engine/policies_test.go: a home
// with the workspace in it, a trusted directory and an outside directory,
// with the same files and symlinks.
type redteamTree struct {
	root, home, ws, trusted, outside string
}

func newRedteamTree(t *testing.T) redteamTree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := redteamTree{root: root, home: root + "/home/u", ws: root + "/home/u/project",
		trusted: root + "/opt/trusted", outside: root + "/outside"}
	for _, name := range []string{"README.md", "Makefile", "go.mod", "main.go", "a.go", "src/app.ts",
		"src/main.go", "scripts/run.sh", "docs/guide.md", ".gitignore"} {
		writeFile(t, filepath.Join(tr.ws, name), "x\n")
	}
	writeFile(t, tr.home+"/.ssh/id_rsa", "secret\n")
	writeFile(t, tr.home+"/.bashrc", "# rc\n")
	writeFile(t, tr.outside+"/secret.txt", "secret\n")
	writeFile(t, tr.trusted+"/data.csv", "a,b\n")
	if err := os.MkdirAll(tr.ws+"/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		tr.ws + "/rootlink": "/", tr.ws + "/etclink": "/etc", tr.ws + "/homelink": tr.home,
		tr.ws + "/up": "..", tr.ws + "/outlink": tr.outside, tr.ws + "/trustlink": tr.trusted,
		tr.ws + "/sub/deep": "../..", tr.ws + "/dangle": tr.outside + "/new.txt", tr.trusted + "/wslink": tr.ws,
	}
	_ = os.Link(tr.home+"/.ssh/id_rsa", tr.ws+"/hardkey") // the out-of-scope hard link row
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// fill replaces the {{...}} placeholders of the table at any depth.
func (tr redteamTree) fill(v any) any {
	switch x := v.(type) {
	case string:
		return strings.NewReplacer("{{ws}}", tr.ws, "{{home}}", tr.home, "{{trusted}}", tr.trusted,
			"{{outside}}", tr.outside, "{{root}}", tr.root).Replace(x)
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = tr.fill(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = tr.fill(e)
		}
		return out
	}
	return v
}

var (
	redteamShellTools = []any{"bash", "mcp_exec_command", "create_terminal"}
	redteamPathTools  = []any{"read_file", "write_file", "edit_file", "read_text_file", "write_text_file", "write",
		"read", "glob_file_search", "glob", "list_dir", "list_files", "grep", "search_replace"}
)

// redteamPolicies are the three policies of engine/policies_test.go as
// permissions sections, with the built-in rules each uses ("" for the
// package default, "rules: []" for none).
func redteamPolicies(tr redteamTree) map[string]struct {
	perms   map[string]any
	builtin string
} {
	base := func() (map[string]any, map[string]any) {
		tools := map[string]any{}
		return map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
			"defaults": map[string]any{"*": "ask"}, "tools": tools, "rules": []any{}, "approval_overrides": []any{}}, tools
	}
	careful, ct := base()
	for _, tool := range []string{"read_file", "read_text_file", "read", "glob_file_search", "glob", "list_dir", "list_files", "grep"} {
		ct[tool] = "allow"
	}
	for _, tool := range []string{"bash", "mcp_exec_command", "create_terminal", "write_file", "write_text_file", "write", "edit_file", "search_replace"} {
		ct[tool] = "ask"
	}
	var rules []any
	for i, pat := range []string{"ls *", "git status *", "cat *", "echo *", "git log *"} {
		rules = append(rules, map[string]any{"id": "careful_" + string(rune('a'+i)), "tools": []any{"bash"}, "pattern": pat, "action": "allow"})
	}
	careful["rules"] = rules
	careful["external_directory"] = map[string]any{"*": "ask", tr.trusted: "allow"}
	sum := sha256.Sum256([]byte(tr.trusted))
	h := hex.EncodeToString(sum[:])[:16]
	quoted := regexp.QuoteMeta(tr.trusted)
	careful["approval_overrides"] = []any{
		map[string]any{"id": "cli_trusted_path_" + h, "tools": redteamPathTools, "match_type": "path",
			"pattern": "re:^" + quoted + "(?:$|/)", "action": "allow", "source": "cli_add_dir"},
		map[string]any{"id": "cli_trusted_shell_" + h, "tools": redteamShellTools, "match_type": "command",
			"pattern": "re:.*" + quoted + ".*", "action": "allow", "source": "cli_add_dir"},
	}
	developer, dt := base()
	for _, tool := range append(append([]any{}, redteamShellTools...), redteamPathTools...) {
		dt[tool.(string)] = "allow"
	}
	developer["external_directory"] = map[string]any{"*": "ask"}
	pathOnly, pt := base()
	for _, tool := range redteamPathTools {
		pt[tool.(string)] = "allow"
	}
	pathOnly["external_directory"] = map[string]any{"*": "deny"}
	return map[string]struct {
		perms   map[string]any
		builtin string
	}{
		"careful":   {careful, "rules: []\n"},
		"developer": {developer, ""},
		"path-only": {pathOnly, "rules: []\n"},
	}
}

func loadRedteamRows(t *testing.T) []redteamRow {
	t.Helper()
	fh, err := os.Open("../engine/testdata/redteam/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var rows []redteamRow
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r redteamRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

var redteamRank = map[string]int{"allow": 1, "ask": 2, "deny": 3}

// TestRedteamOverHTTP: a sample of the red-team table, sent to
// POST /api/v1/evaluate of the real server with the row's policy in force
// and the row's workspace, is never decided looser than the row allows; a
// 4xx for a malformed shape is not an allow either.
func TestRedteamOverHTTP(t *testing.T) {
	tr := newRedteamTree(t)
	servers := map[string]*Server{}
	for name, p := range redteamPolicies(tr) {
		cfg, err := json.Marshal(map[string]any{"permissions": p.perms}) // JSON is YAML
		if err != nil {
			t.Fatal(err)
		}
		servers[name] = StartServer(t, ServerOptions{ConfigYAML: string(cfg), BuiltinYAML: p.builtin})
	}
	// The policies are in force: each allows what it means to allow, so a
	// server left on a fallback policy cannot pass the sample vacuously.
	for _, c := range []struct{ policy, tool, key, value, want string }{
		{"careful", "bash", "command", "ls -la", "allow"},
		{"careful", "read_file", "path", tr.trusted + "/data.csv", "allow"},
		{"developer", "bash", "command", "make -j4", "allow"},
		{"developer", "bash", "command", "rm -rf /", "deny"},
		{"path-only", "write_file", "path", "src/main.go", "allow"},
		{"path-only", "read_file", "path", "/etc/hostname", "deny"},
	} {
		st, body := servers[c.policy].Do("POST", "/api/v1/evaluate", map[string]any{
			"tool_name": c.tool, "tool_args": map[string]any{c.key: c.value}, "workspace": tr.ws})
		got := DecodeJSON[struct {
			Level string `json:"level"`
		}](t, body)
		if st != 200 || got.Level != c.want {
			t.Fatalf("sanity under %s: %s %s: %d %s, want %s", c.policy, c.tool, c.value, st, body, c.want)
		}
	}
	rows := loadRedteamRows(t)
	tried, looser := map[int]int{}, map[int]int{}
	for i, r := range rows {
		if i%redteamSampleEvery != 0 {
			continue
		}
		s := servers[r.Policy]
		if s == nil {
			t.Fatalf("%s: unknown policy %q", r.ID, r.Policy)
		}
		args := tr.fill(r.ToolArgs)
		st, body := s.Do("POST", "/api/v1/evaluate", map[string]any{
			"tool_name": r.ToolName, "tool_args": args, "workspace": tr.ws, "channel_id": "web"})
		tried[r.Cause]++
		argMap, _ := args.(map[string]any)
		_, hasCommand := argMap["command"]
		if _, hasCmd := argMap["cmd"]; hasCommand && hasCmd && st == 400 && strings.Contains(string(body), "tool_args.cmd") {
			continue // both command and cmd: refused as ambiguous, stricter than any decision
		}
		if st != 200 {
			// A refused request tests nothing: the row's call was never evaluated.
			t.Errorf("%s: evaluate answered %d %s, want 200 with a decision", r.ID, st, body)
			continue
		}
		got := DecodeJSON[struct {
			Level       string `json:"level"`
			MatchedRule string `json:"matched_rule"`
		}](t, body)
		if redteamRank[got.Level] >= redteamRank[r.Max] {
			continue
		}
		if r.OutOfScope != "" {
			t.Logf("out of scope, not failed: %s got %s; reason: %s", r.ID, got.Level, r.OutOfScope)
			continue
		}
		looser[r.Cause]++
		t.Errorf("LOOSER over HTTP: %s (cause %d, %s, %s): %s %.160v: %s (rule %q), want %s or stricter",
			r.ID, r.Cause, r.Policy, r.Source, r.ToolName, args, got.Level, got.MatchedRule, r.Max)
	}
	for cause := 1; cause <= 8; cause++ {
		t.Logf("cause %d: %d attempts over HTTP, %d looser", cause, tried[cause], looser[cause])
	}
	// A design that asks about everything is not a fix: a sample of the
	// engine's benign table stays allow over HTTP too.
	for _, c := range []struct{ policy, tool, key, value string }{
		{"developer", "bash", "command", "npx prettier --write 'src/**/*.ts'"},
		{"developer", "bash", "command", "cp a.go{,.bak}"},
		{"developer", "bash", "command", "env GOOS=linux go build ./..."},
		{"developer", "bash", "command", "ls ~+/src"},
		{"developer", "bash", "command", "cat $PWD/README.md"},
		{"developer", "bash", "command", "./scripts/run.sh"},
		{"developer", "edit_file", "file_path", "src/main.go"},
		{"careful", "bash", "command", "git log -p"},
		{"careful", "bash", "command", "ls " + tr.trusted},
	} {
		st, body := servers[c.policy].Do("POST", "/api/v1/evaluate", map[string]any{
			"tool_name": c.tool, "tool_args": map[string]any{c.key: c.value}, "workspace": tr.ws})
		got := DecodeJSON[struct {
			Level       string `json:"level"`
			MatchedRule string `json:"matched_rule"`
		}](t, body)
		if st != 200 || got.Level != "allow" {
			t.Errorf("benign over HTTP under %s: %s %s: %d %s (rule %q), want allow", c.policy, c.tool, c.value, st, got.Level, got.MatchedRule)
		}
	}
}
