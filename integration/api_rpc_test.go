package integration

import (
	"encoding/json"
	"strings"
	"testing"
)

type rpcResp struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	ID json.RawMessage `json:"id"`
}

// TestAPIRPC runs each JSON-RPC method and each standard error.
func TestAPIRPC(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	rpc := func(body any) (int, []byte) {
		t.Helper()
		st, _, b := s.Call(s.Token, "POST", "/rpc", body, nil)
		return st, b
	}
	req := func(method string, params any, id any) map[string]any {
		m := map[string]any{"jsonrpc": "2.0", "method": method}
		if params != nil {
			m["params"] = params
		}
		if id != nil {
			m["id"] = id
		}
		return m
	}
	cases := []struct {
		note     string
		call     map[string]any
		wantCode int // 0: a result
		wantIn   string
	}{
		{"tools.update", req("permissions.tools.update", map[string]any{"tool": "mcp_free_search", "level": "deny"}, 1), 0, `"deny"`},
		{"tools.get", req("permissions.tools.get", nil, 2), 0, `"mcp_free_search":"deny"`},
		{"tools.delete", req("permissions.tools.delete", map[string]any{"tool": "mcp_free_search"}, 3), 0, "deleted"},
		{"tools.delete unknown", req("permissions.tools.delete", map[string]any{"tool": "mcp_free_search"}, 4), -32004, ""},
		{"tools.set", req("permissions.tools.set", map[string]any{"tools": map[string]any{"bash": "ask", "read_file": "allow"}}, 5), 0, `"read_file":"allow"`},
		{"tools.update invalid level", req("permissions.tools.update", map[string]any{"tool": "bash", "level": "x"}, 6), -32602, "无效级别"},
		{"rules.create", req("permissions.rules.create", map[string]any{"id": "r1", "tools": []string{"bash"}, "pattern": "ls *", "action": "allow"}, 7), 0, `"r1"`},
		{"rules.create twice", req("permissions.rules.create", map[string]any{"id": "r1", "tools": []string{"bash"}, "pattern": "ls *", "action": "allow"}, 8), -32009, ""},
		{"rules.create bad regex", req("permissions.rules.create", map[string]any{"id": "r2", "tools": []string{"bash"}, "pattern": "re:(", "action": "allow"}, 9), -32602, "pattern"},
		{"rules.update", req("permissions.rules.update", map[string]any{"id": "r1", "action": "deny"}, 10), 0, `"deny"`},
		{"rules.get", req("permissions.rules.get", map[string]any{}, 11), 0, `"r1"`},
		{"rules.get one", req("permissions.rules.get", map[string]any{"id": "r1"}, 12), 0, `"r1"`},
		{"rules.delete", req("permissions.rules.delete", map[string]any{"id": "r1"}, 13), 0, "deleted"},
		{"rules.delete unknown", req("permissions.rules.delete", map[string]any{"id": "r1"}, 14), -32004, ""},
		{"command.add_dir", req("command.add_dir", map[string]any{"path": "/opt/proj"}, 15), 0, `"/opt/proj"`},
		{"approval_overrides.get", req("permissions.approval_overrides.get", nil, 16), 0, "cli_trusted_path_"},
		{"owner_scopes.set", req("permissions.owner_scopes.set", map[string]any{"owner_scopes": map[string]any{"feishu": map[string]any{"u1": map[string]any{"defaults": map[string]any{"*": "deny"}}}}}, 17), 0, `"u1"`},
		{"owner_scopes.get", req("permissions.owner_scopes.get", nil, 18), 0, `"u1"`},
		{"approval_overrides.delete unknown", req("permissions.approval_overrides.delete", map[string]any{"id": "nope"}, 19), -32004, ""},
		{"method not found", req("permissions.nope", nil, 20), -32601, ""},
		{"invalid params: unknown field", req("permissions.tools.get", map[string]any{"x": 1}, 21), -32602, ""},
		{"invalid request: version", map[string]any{"jsonrpc": "1.0", "method": "permissions.tools.get", "id": 22}, -32600, ""},
	}
	for _, c := range cases {
		st, body := rpc(c.call)
		resp := DecodeJSON[rpcResp](t, body)
		switch {
		case st != 200:
			t.Errorf("%s: status %d %s", c.note, st, body)
		case c.wantCode == 0 && resp.Error != nil:
			t.Errorf("%s: error %s", c.note, body)
		case c.wantCode != 0 && (resp.Error == nil || resp.Error.Code != c.wantCode):
			t.Errorf("%s: got %s, want error %d", c.note, body, c.wantCode)
		case !strings.Contains(string(body), c.wantIn):
			t.Errorf("%s: %s lacks %q", c.note, body, c.wantIn)
		}
	}
	// The overrides of /add-dir are deletable.
	_, body := rpc(req("permissions.approval_overrides.get", nil, 30))
	var got struct {
		Result struct {
			Overrides []map[string]any `json:"approval_overrides"`
		} `json:"result"`
	}
	_ = json.Unmarshal(body, &got)
	if len(got.Result.Overrides) == 0 {
		t.Fatalf("no overrides: %s", body)
	}
	_, body = rpc(req("permissions.approval_overrides.delete", map[string]any{"id": got.Result.Overrides[0]["id"]}, 31))
	if strings.Contains(string(body), `"error"`) {
		t.Errorf("delete override: %s", body)
	}

	t.Run("parse error", func(t *testing.T) {
		st, body := rpc(`{"jsonrpc": "2.0", "method"`)
		if r := DecodeJSON[rpcResp](t, body); st != 200 || r.Error == nil || r.Error.Code != -32700 || string(r.ID) != "null" {
			t.Errorf("got %d %s", st, body)
		}
	})
	t.Run("empty batch", func(t *testing.T) {
		_, body := rpc(`[]`)
		if r := DecodeJSON[rpcResp](t, body); r.Error == nil || r.Error.Code != -32600 {
			t.Errorf("got %s", body)
		}
	})
	t.Run("batch with a notification and an invalid entry", func(t *testing.T) {
		st, body := rpc([]any{req("permissions.tools.get", nil, "a"), req("permissions.rules.get", nil, nil), 5})
		rs := DecodeJSON[[]rpcResp](t, body)
		if st != 200 || len(rs) != 2 || string(rs[0].ID) != `"a"` || rs[1].Error == nil || rs[1].Error.Code != -32600 {
			t.Errorf("got %d %s", st, body)
		}
	})
	t.Run("notifications only", func(t *testing.T) {
		st, body := rpc([]any{req("permissions.tools.get", nil, nil)})
		if st != 204 || len(body) != 0 {
			t.Errorf("got %d %q", st, body)
		}
		st, _ = rpc(req("permissions.tools.update", map[string]any{"tool": "grep", "level": "deny"}, nil))
		if st != 204 || !strings.Contains(s.ReadFile("config.yaml"), "grep: deny") {
			t.Errorf("a notification write: %d", st)
		}
	})
}
