package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/service"
)

// ownersServer is an API server over a config.yaml whose permissions
// section ends with owner, and its admin token.
func ownersServer(t *testing.T, owners string) *builtinServer {
	t.Helper()
	bs := &builtinServer{dir: t.TempDir(), workspace: t.TempDir()}
	cfg := "permissions:\n  schema: tiered_policy\n  tools: {bash: allow}\n" + owners
	if err := os.WriteFile(filepath.Join(bs.dir, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	serveConfigDir(t, bs)
	return bs
}

// rpc calls one JSON-RPC method and returns its result or error object.
func (bs *builtinServer) rpc(t *testing.T, method string, params any) (result json.RawMessage, rpcErr *api.RPCError) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	status, data := bs.do(t, "POST", bs.admin, "/rpc", string(body))
	if status != http.StatusOK {
		t.Fatalf("rpc %s: status %d %s", method, status, data)
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *api.RPCError   `json:"error"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		t.Fatal(err)
	}
	return resp.Result, resp.Error
}

// TestOwnerScopesGetAsBefore: GET and permissions.owner_scopes.get answer
// from the typed policy with the JSON they answered when they read the
// stored mapping (want is that mapping as written), in the shapes a file
// may hold, broken ones included.
func TestOwnerScopesGetAsBefore(t *testing.T) {
	cases := []struct {
		note, yaml, want string
	}{
		{"none", "", `{}`},
		{"an empty mapping", "  owner_scopes: {}\n", `{}`},
		{"the JiuwenSwarm shape", "  owner_scopes:\n    feishu:\n      ou_1:\n        tools:\n          bash: {patterns: {'git *': allow, 're:^rm ': deny}, '*': ask}\n          read_file: allow\n        defaults: {'*': deny}\n",
			`{"feishu":{"ou_1":{"tools":{"bash":{"patterns":{"git *":"allow","re:^rm ":"deny"},"*":"ask"},"read_file":"allow"},"defaults":{"*":"deny"}}}}`},
		{"empty channel, scope, tools, entry and patterns", "  owner_scopes:\n    slack: {}\n    feishu:\n      ou_1: {}\n      ou_2: {tools: {}}\n      ou_3: {tools: {bash: {}, grep: {patterns: {}}}}\n",
			`{"slack":{},"feishu":{"ou_1":{},"ou_2":{"tools":{}},"ou_3":{"tools":{"bash":{},"grep":{"patterns":{}}}}}}`},
		{"the earlier shape is answered as written", "  owner_scopes:\n    ou_old:\n      tools: {bash: allow}\n",
			`{"ou_old":{"tools":{"bash":"allow"}}}`},
		{"a level in another spelling is answered as written", "  owner_scopes:\n    feishu:\n      ou_1: {tools: {bash: Allow}}\n",
			`{"feishu":{"ou_1":{"tools":{"bash":"Allow"}}}}`},
		{"a scope that is not a mapping is answered as written", "  owner_scopes:\n    feishu:\n      ou_1: deny\n",
			`{"feishu":{"ou_1":"deny"}}`},
		{"owner_scopes that are not a mapping answer none", "  owner_scopes: deny\n", `{}`},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			bs := ownersServer(t, c.yaml)
			var want any
			if err := json.Unmarshal([]byte(c.want), &want); err != nil {
				t.Fatal(err)
			}
			status, data := bs.do(t, "GET", bs.admin, "/api/v1/permissions/owner-scopes", "")
			if status != http.StatusOK {
				t.Fatalf("GET: %d %s", status, data)
			}
			if got := ownerScopesOf(t, data); !reflect.DeepEqual(got, want) {
				t.Errorf("GET: got %v, want %v", got, want)
			}
			result, rpcErr := bs.rpc(t, "permissions.owner_scopes.get", map[string]any{})
			if rpcErr != nil {
				t.Fatalf("rpc get: %+v", rpcErr)
			}
			if got := ownerScopesOf(t, result); !reflect.DeepEqual(got, want) {
				t.Errorf("rpc get: got %v, want %v", got, want)
			}
		})
	}
}

// TestOwnerScopesPutRoundTrip: what PUT writes, GET answers as sent, and
// an empty object removes owner_scopes.
func TestOwnerScopesPutRoundTrip(t *testing.T) {
	bs := ownersServer(t, "")
	scopes := `{"feishu":{"ou_1":{"tools":{"bash":{"patterns":{"git *":"allow"},"*":"ask"},"grep":{},"ls":{"patterns":{}},"read_file":"allow"},"defaults":{"*":"deny"}},"ou_2":{"tools":{}}},"slack":{}}`
	var want any
	if err := json.Unmarshal([]byte(scopes), &want); err != nil {
		t.Fatal(err)
	}
	status, data := bs.do(t, "PUT", bs.admin, "/api/v1/permissions/owner-scopes", `{"owner_scopes":`+scopes+`}`)
	if status != http.StatusOK || !reflect.DeepEqual(ownerScopesOf(t, data), want) {
		t.Fatalf("PUT: %d %s", status, data)
	}
	status, data = bs.do(t, "PUT", bs.admin, "/api/v1/permissions/owner-scopes", `{"owner_scopes":{}}`)
	if status != http.StatusOK || !reflect.DeepEqual(ownerScopesOf(t, data), map[string]any{}) {
		t.Errorf("PUT {}: %d %s", status, data)
	}
	if cfg, _ := os.ReadFile(filepath.Join(bs.dir, "config.yaml")); strings.Contains(string(cfg), "owner_scopes") {
		t.Errorf("an empty object left owner_scopes in config.yaml:\n%s", cfg)
	}
}

// TestOwnerScopesRefusedAlike: REST and JSON-RPC refuse the same bad
// owner_scopes with the same field, message and status, and write nothing.
func TestOwnerScopesRefusedAlike(t *testing.T) {
	cases := []struct {
		note, scopes, field string
	}{
		{"the earlier shape", `{"ou_1":{"tools":{"bash":"deny"}}}`, "owner_scopes.ou_1"},
		{"a channel that is not an object", `{"feishu":"deny"}`, "owner_scopes.feishu"},
		{"a scope that is not an object", `{"feishu":{"ou_1":"deny"}}`, "owner_scopes.feishu.ou_1"},
		{"an unknown scope field", `{"feishu":{"ou_1":{"mode":"strict"}}}`, "owner_scopes.feishu.ou_1.mode"},
		{"tools that are not an object", `{"feishu":{"ou_1":{"tools":["bash"]}}}`, "owner_scopes.feishu.ou_1.tools"},
		{"a level in capitals", `{"feishu":{"ou_1":{"tools":{"bash":"Allow"}}}}`, "owner_scopes.feishu.ou_1.tools.bash"},
		{"an invalid * level", `{"feishu":{"ou_1":{"tools":{"bash":{"*":"maybe"}}}}}`, "owner_scopes.feishu.ou_1.tools.bash.*"},
		{"an unknown tool entry field", `{"feishu":{"ou_1":{"tools":{"bash":{"regex":"deny"}}}}}`, "owner_scopes.feishu.ou_1.tools.bash.regex"},
		{"a pattern that does not compile", `{"feishu":{"ou_1":{"tools":{"bash":{"patterns":{"re:(":"deny"}}}}}}`, "owner_scopes.feishu.ou_1.tools.bash.patterns['re:(']"},
		{"an invalid pattern level", `{"feishu":{"ou_1":{"tools":{"bash":{"patterns":{"git *":"yes"}}}}}}`, "owner_scopes.feishu.ou_1.tools.bash.patterns['git *']"},
		{"defaults only take *", `{"feishu":{"ou_1":{"defaults":{"bash":"deny"}}}}`, "owner_scopes.feishu.ou_1.defaults.bash"},
	}
	bs := ownersServer(t, "")
	before, _ := os.ReadFile(filepath.Join(bs.dir, "config.yaml"))
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			status, data := bs.do(t, "PUT", bs.admin, "/api/v1/permissions/owner-scopes", `{"owner_scopes":`+c.scopes+`}`)
			var rest struct {
				Error service.Error `json:"error"`
			}
			if err := json.Unmarshal(data, &rest); err != nil {
				t.Fatal(err)
			}
			if status != http.StatusBadRequest || len(rest.Error.Details) == 0 || rest.Error.Details[0].Field != c.field {
				t.Fatalf("REST: got %d %s, want 400 on %s", status, data, c.field)
			}
			var params any
			_ = json.Unmarshal([]byte(`{"owner_scopes":`+c.scopes+`}`), &params)
			_, rpcErr := bs.rpc(t, "permissions.owner_scopes.set", params)
			if rpcErr == nil {
				t.Fatal("rpc: got a result, want an error")
			}
			var data2 struct {
				Status  int `json:"status"`
				Details []struct {
					Field string `json:"field"`
				} `json:"details"`
			}
			raw, _ := json.Marshal(rpcErr.Data)
			_ = json.Unmarshal(raw, &data2)
			if data2.Status != status || len(data2.Details) == 0 || data2.Details[0].Field != c.field || rpcErr.Message != rest.Error.Message {
				t.Errorf("rpc: got %s %q, want status %d on %s with %q", raw, rpcErr.Message, status, c.field, rest.Error.Message)
			}
		})
	}
	if after, _ := os.ReadFile(filepath.Join(bs.dir, "config.yaml")); string(after) != string(before) {
		t.Errorf("a refused write changed config.yaml")
	}
}

func ownerScopesOf(t *testing.T, data []byte) any {
	t.Helper()
	var got struct {
		OwnerScopes any `json:"owner_scopes"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	return got.OwnerScopes
}
