package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/store/auth"
)

const builtinTestPolicy = `permissions:
  enabled: true
  schema: tiered_policy
  permission_mode: normal
  defaults: {"*": ask}
  tools:
    read_file: allow
  external_directory:
    "*": allow
`

// builtinServer is an API server over a config dir in file mode.
type builtinServer struct {
	url, dir, workspace string
	admin, approver     string
}

func newBuiltinServer(t *testing.T) *builtinServer {
	t.Helper()
	bs := &builtinServer{dir: t.TempDir(), workspace: t.TempDir()}
	if err := os.WriteFile(filepath.Join(bs.dir, "config.yaml"), []byte(builtinTestPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bs.dir, "builtin_rules.yaml"), []byte("rules: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := serveConfigDir(t, bs)
	var err error
	if _, bs.approver, err = tokens.Create("phone", auth.RoleApprover, nil, nil); err != nil {
		t.Fatal(err)
	}
	return bs
}

// serveConfigDir serves the API over the config dir bs.dir (its files
// written) and bs.workspace in file mode, sets bs.admin and bs.url, and
// returns the token set.
func serveConfigDir(t *testing.T, bs *builtinServer) *auth.Tokens {
	t.Helper()
	st, err := inforce.Open(bs.dir, inforce.Options{Workspace: bs.workspace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	tokens, _, err := auth.OpenTokens(bs.dir)
	if err != nil {
		t.Fatal(err)
	}
	if bs.admin, err = tokens.AdminToken(); err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Deps{Policy: st, Tokens: tokens, Documents: st.Backend(), Logger: discardLogger()})
	r := chi.NewRouter()
	srv.Mount(r)
	ts := httptest.NewServer(r)
	t.Cleanup(ts.Close)
	bs.url = ts.URL
	return tokens
}

func (bs *builtinServer) do(t *testing.T, method, token, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, bs.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// level evaluates read_file of a file in the workspace named secret.txt.
func (bs *builtinServer) level(t *testing.T) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"tool_name": "read_file",
		"tool_args": map[string]any{"path": filepath.Join(bs.workspace, "secret.txt")}})
	status, data := bs.do(t, "POST", bs.admin, "/api/v1/evaluate", string(body))
	if status != http.StatusOK {
		t.Fatalf("evaluate: status %d %s", status, data)
	}
	var got api.EvaluateResponse
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	return got.Level
}

const denySecretRules = "# ours\nrules:\n  - id: no_secret\n    tools: [read_file]\n    pattern: 're:secret'\n    action: deny\n"

// TestPutBuiltinRulesFileMode: an admin's list is written to
// builtin_rules.yaml as sent and decides the next call at once.
func TestPutBuiltinRulesFileMode(t *testing.T) {
	bs := newBuiltinServer(t)
	if got := bs.level(t); got != "allow" {
		t.Fatalf("before: level %q, want allow", got)
	}
	status, data := bs.do(t, "PUT", bs.admin, "/api/v1/permissions/builtin-rules", denySecretRules)
	if status != http.StatusOK {
		t.Fatalf("PUT: status %d %s, want 200", status, data)
	}
	var resp api.BuiltinRulesResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Rules) != 1 || !strings.HasSuffix(resp.Source, "builtin_rules.yaml") {
		t.Errorf("PUT answer = %+v, want the one rule from builtin_rules.yaml", resp)
	}
	file, err := os.ReadFile(filepath.Join(bs.dir, "builtin_rules.yaml"))
	if err != nil || string(file) != denySecretRules {
		t.Errorf("builtin_rules.yaml = %q, %v; want the text sent", file, err)
	}
	if got := bs.level(t); got != "deny" {
		t.Errorf("after: level %q, want deny", got)
	}
	// JSON (GET's own answer) is taken too: an empty list allows again.
	if status, data := bs.do(t, "PUT", bs.admin, "/api/v1/permissions/builtin-rules", `{"source":"x","rules":[]}`); status != http.StatusOK {
		t.Fatalf("PUT JSON: status %d %s, want 200", status, data)
	}
	if got := bs.level(t); got != "allow" {
		t.Errorf("after the empty list: level %q, want allow", got)
	}
}

// TestPutBuiltinRulesRefused: a bad list, an approver and an If-Match are
// refused and builtin_rules.yaml stays as it was.
func TestPutBuiltinRulesRefused(t *testing.T) {
	cases := []struct {
		note, token, body, ifMatch string
		status                     int
		field                      string
	}{
		{note: "does not parse", body: "rules: [", status: 400, field: "builtin_rules"},
		{note: "not a mapping", body: "- a\n", status: 400, field: "builtin_rules"},
		{note: "no rules list", body: "{}", status: 400, field: "builtin_rules"},
		{note: "rules not a list", body: "rules: 3", status: 400, field: "builtin_rules"},
		{note: "empty body", body: "", status: 400, field: "builtin_rules"},
		{note: "bad pattern", body: "rules:\n  - {id: x, tools: [read_file], pattern: 're:(', action: deny}\n", status: 400, field: "builtin_rules[0].pattern"},
		{note: "no tools", body: "rules:\n  - {id: x, pattern: 'rm', action: deny}\n", status: 400, field: "builtin_rules[0].tools"},
		{note: "bad action", body: "rules:\n  - {id: x, tools: [bash], pattern: 'rm', action: maybe}\n", status: 400, field: "builtin_rules[0].action"},
		{note: "an approver", token: "approver", body: denySecretRules, status: 403},
		{note: "an If-Match", body: denySecretRules, ifMatch: `"abc"`, status: 400, field: "If-Match"},
	}
	bs := newBuiltinServer(t)
	path := filepath.Join(bs.dir, "builtin_rules.yaml")
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			token := bs.admin
			if c.token == "approver" {
				token = bs.approver
			}
			req, _ := http.NewRequest("PUT", bs.url+"/api/v1/permissions/builtin-rules", bytes.NewReader([]byte(c.body)))
			req.Header.Set("Authorization", "Bearer "+token)
			if c.ifMatch != "" {
				req.Header.Set("If-Match", c.ifMatch)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, data, c.status)
			}
			if c.field != "" {
				var e struct {
					Error struct {
						Details []struct{ Field string } `json:"details"`
					} `json:"error"`
				}
				_ = json.Unmarshal(data, &e)
				var fields []string
				for _, d := range e.Error.Details {
					fields = append(fields, d.Field)
				}
				if !contains(fields, c.field) {
					t.Errorf("error %s names %v, want %s", data, fields, c.field)
				}
			}
			if got, _ := os.ReadFile(path); string(got) != "rules: []\n" {
				t.Errorf("builtin_rules.yaml = %q, want it unchanged", got)
			}
			if got := bs.level(t); got != "allow" {
				t.Errorf("level %q, want allow (the list in force unchanged)", got)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
