package integration

import (
	"testing"
)

// policyRoute is one route of the permissions API and whether it only reads.
type policyRoute struct {
	method, path string
	body         any
	read         bool
}

var policyRoutes = []policyRoute{
	{"GET", "/api/v1/permissions", nil, true},
	{"PUT", "/api/v1/permissions", map[string]any{}, false},
	{"GET", "/api/v1/permissions/settings", nil, true},
	{"PATCH", "/api/v1/permissions/settings", map[string]any{"enabled": true}, false},
	{"GET", "/api/v1/permissions/tools", nil, true},
	{"PUT", "/api/v1/permissions/tools/bash", map[string]any{"level": "ask"}, false},
	{"DELETE", "/api/v1/permissions/tools/bash", nil, false},
	{"GET", "/api/v1/permissions/rules", nil, true},
	{"POST", "/api/v1/permissions/rules", map[string]any{"tools": "bash", "pattern": "ls", "action": "allow"}, false},
	{"GET", "/api/v1/permissions/rules/x", nil, true},
	{"PATCH", "/api/v1/permissions/rules/x", map[string]any{"action": "ask"}, false},
	{"DELETE", "/api/v1/permissions/rules/x", nil, false},
	{"GET", "/api/v1/permissions/approval-overrides", nil, true},
	{"POST", "/api/v1/permissions/approval-overrides", map[string]any{"tools": "bash", "pattern": "ls", "action": "allow"}, false},
	{"DELETE", "/api/v1/permissions/approval-overrides/x", nil, false},
	{"GET", "/api/v1/permissions/external-directory", nil, true},
	{"PUT", "/api/v1/permissions/external-directory", map[string]any{"key": "/x", "level": "ask"}, false},
	{"DELETE", "/api/v1/permissions/external-directory?key=/x", nil, false},
	{"GET", "/api/v1/permissions/owner-scopes", nil, true},
	{"PUT", "/api/v1/permissions/owner-scopes", map[string]any{"owner_scopes": map[string]any{}}, false},
	{"GET", "/api/v1/permissions/builtin-rules", nil, true},
	{"POST", "/api/v1/permissions/validate", map[string]any{}, true},
	{"GET", "/api/v1/tokens", nil, false},
	{"POST", "/api/v1/tokens", map[string]any{"name": "n", "role": "agent"}, false},
	{"DELETE", "/api/v1/tokens/tok_x", nil, false},
	{"POST", "/api/v1/commands", map[string]any{"text": "/permissions"}, true},
	{"POST", "/api/v1/commands", map[string]any{"text": "/permissions ask bash"}, false},
	{"POST", "/rpc", map[string]any{"jsonrpc": "2.0", "method": "permissions.tools.get", "id": 1}, true},
}

// createToken makes a token of a role through the API and returns its
// secret.
func createToken(t *testing.T, s *Server, name, role string) string {
	t.Helper()
	_, secret := createTokenID(t, s, name, role)
	return secret
}

// createTokenID makes a token of a role through the API and returns its id
// and secret.
func createTokenID(t *testing.T, s *Server, name, role string) (id, secret string) {
	t.Helper()
	st, _, body := s.Call(s.Token, "POST", "/api/v1/tokens", map[string]any{"name": name, "role": role}, nil)
	if st != 201 {
		t.Fatalf("create %s token = %d %s", role, st, body)
	}
	created := DecodeJSON[struct {
		Token struct {
			ID string `json:"id"`
		} `json:"token"`
		Secret string `json:"secret"`
	}](t, body)
	return created.Token.ID, created.Secret
}

// TestAPIRoles checks each role against each route: no or a wrong token is
// 401, an agent may touch none of them, an approver only reads.
func TestAPIRoles(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	approver := createToken(t, s, "alice", "approver")
	agent := createToken(t, s, "runtime", "agent")
	for _, rt := range policyRoutes {
		note := rt.method + " " + rt.path
		st, _, body := s.Call("", rt.method, rt.path, rt.body, nil)
		wantStatus(t, note+" without a token", st, body, 401, "")
		st, _, body = s.Call("not-a-token", rt.method, rt.path, rt.body, nil)
		wantStatus(t, note+" with a wrong token", st, body, 401, "")
		st, _, body = s.Call(agent, rt.method, rt.path, rt.body, nil)
		wantStatus(t, note+" as agent", st, body, 403, "")
		st, _, body = s.Call(approver, rt.method, rt.path, rt.body, nil)
		if rt.read {
			if st == 401 || st == 403 {
				t.Errorf("%s as approver = %d, want it allowed: %s", note, st, body)
			}
		} else {
			wantStatus(t, note+" as approver", st, body, 403, "")
		}
	}
	// An approver's RPC write is refused inside the JSON-RPC answer.
	st, _, body := s.Call(approver, "POST", "/rpc", map[string]any{"jsonrpc": "2.0", "method": "permissions.tools.update", "params": map[string]any{"tool": "bash", "level": "allow"}, "id": 2}, nil)
	if resp := DecodeJSON[rpcResp](t, body); st != 200 || resp.Error == nil || resp.Error.Code != -32003 {
		t.Errorf("approver rpc write = %d %s, want error -32003", st, body)
	}
}

// TestAPITokens lists, creates and revokes tokens; a revoked token is 401.
func TestAPITokens(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	id, secret := createTokenID(t, s, "bob", "approver")
	st, _, body := s.Call(s.Token, "GET", "/api/v1/tokens", nil, nil)
	if st != 200 || !contains(string(body), id) || contains(string(body), secret) {
		t.Errorf("list = %d %s", st, body)
	}
	st, _, body = s.Call(s.Token, "POST", "/api/v1/tokens", map[string]any{"name": "x", "role": "root"}, nil)
	wantStatus(t, "bad role", st, body, 400, "role")
	st, _, body = s.Call(s.Token, "POST", "/api/v1/tokens", map[string]any{"role": "agent"}, nil)
	wantStatus(t, "no name", st, body, 400, "name")
	st, _, body = s.Call(secret, "GET", "/api/v1/permissions", nil, nil)
	wantStatus(t, "the new token reads", st, body, 200, "")
	st, _, body = s.Call(s.Token, "DELETE", "/api/v1/tokens/"+id, nil, nil)
	wantStatus(t, "revoke", st, body, 204, "")
	st, _, body = s.Call(s.Token, "DELETE", "/api/v1/tokens/"+id, nil, nil)
	wantStatus(t, "revoke again", st, body, 404, "")
	st, _, body = s.Call(secret, "GET", "/api/v1/permissions", nil, nil)
	wantStatus(t, "the revoked token", st, body, 401, "")
}

func contains(s, sub string) bool { return sub != "" && len(s) >= len(sub) && indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
