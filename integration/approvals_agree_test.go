package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestApprovalRefusalsAgreeAtEveryDoor: every answer REST refuses, the
// websocket and JSON-RPC refuse with the same code and message, and none
// changes the ask. The doors call one use case; a check that only one of
// them makes (or makes differently) fails here.
func TestApprovalRefusalsAgreeAtEveryDoor(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	st, _, body := s.Call(s.Token, "POST", "/api/v1/tokens", map[string]any{"name": "s1-approver", "role": "approver", "sessions": []string{"s1"}}, nil)
	if st != 201 {
		t.Fatalf("create approver: %d %s", st, body)
	}
	limited := DecodeJSON[struct {
		Secret string `json:"secret"`
	}](t, body).Secret
	inScope := answered(t, checkAsync(s, s.Token, askBody("make inscope", "", "s1", 0)), 10*time.Second)
	outside := answered(t, checkAsync(s, s.Token, askBody("make outside", "", "s2", 0)), 10*time.Second)
	if inScope.Approval == nil || outside.Approval == nil {
		t.Fatalf("checks: got %+v and %+v, want two pending asks", inScope, outside)
	}
	ws := map[string]*wsConn{}
	ws[limited], _ = connectWS(t, s, limited)
	ws[s.Token], _ = connectWS(t, s, s.Token)
	tests := []struct {
		note   string
		token  string
		id     string
		body   map[string]any
		status int
		code   string
	}{
		{note: "session-limited approver answers allow_for", token: limited, id: inScope.Approval.ID,
			body: map[string]any{"choice": "allow_for", "ttl_seconds": 3600}, status: 403, code: "forbidden"},
		{note: "session-limited approver answers allow_always", token: limited, id: inScope.Approval.ID,
			body: map[string]any{"choice": "allow_always"}, status: 403, code: "forbidden"},
		{note: "ask outside the approver's sessions", token: limited, id: outside.Approval.ID,
			body: map[string]any{"choice": "allow_once"}, status: 404, code: "not_found"},
		{note: "no such ask", token: s.Token, id: "NOSUCHASK",
			body: map[string]any{"choice": "deny"}, status: 404, code: "not_found"},
		{note: "unknown choice", token: s.Token, id: inScope.Approval.ID,
			body: map[string]any{"choice": "maybe"}, status: 400, code: "bad_request"},
		{note: "comment over the limit", token: s.Token, id: inScope.Approval.ID,
			body: map[string]any{"choice": "deny", "comment": strings.Repeat("c", 5000)}, status: 400, code: "bad_request"},
		{note: "ttl_seconds with allow_once", token: s.Token, id: inScope.Approval.ID,
			body: map[string]any{"choice": "allow_once", "ttl_seconds": 60}, status: 400, code: "bad_request"},
		{note: "negative ttl_seconds", token: s.Token, id: inScope.Approval.ID,
			body: map[string]any{"choice": "allow_for", "ttl_seconds": -60}, status: 400, code: "bad_request"},
		{note: "allow_for over the longest ttl", token: s.Token, id: inScope.Approval.ID,
			body: map[string]any{"choice": "allow_for", "ttl_seconds": 400 * 24 * 3600}, status: 400, code: "bad_request"},
	}
	for _, tt := range tests {
		st, _, raw := s.Call(tt.token, "POST", "/api/v1/approvals/"+tt.id+"/decision", tt.body, nil)
		rest := DecodeJSON[struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}](t, raw).Error
		if st != tt.status || rest.Code != tt.code {
			t.Errorf("%s: REST %d %s, want %d %s", tt.note, st, raw, tt.status, tt.code)
		}
		msg := map[string]any{"type": "approval.decide", "id": tt.id}
		for k, v := range tt.body {
			msg[k] = v
		}
		params := map[string]any{"id": tt.id}
		for k, v := range tt.body {
			params[k] = v
		}
		_, _, rpcRaw := s.Call(tt.token, "POST", "/rpc", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "approvals.decide", "params": params}, nil)
		rpc := DecodeJSON[struct {
			Error struct {
				Message string `json:"message"`
				Data    struct {
					Status int    `json:"status"`
					Code   string `json:"code"`
				} `json:"data"`
			} `json:"error"`
		}](t, rpcRaw).Error
		if rpc.Data.Status != st || rpc.Data.Code != rest.Code || rpc.Message != rest.Message {
			t.Errorf("%s: the doors disagree: JSON-RPC %s, REST %s", tt.note, strings.TrimSpace(string(rpcRaw)), strings.TrimSpace(string(raw)))
		}
		c := ws[tt.token]
		if err := c.conn.WriteJSON(msg); err != nil {
			t.Fatal(err)
		}
		got := c.next("error", tt.id, 5*time.Second)
		var wsErr struct {
			Message string `json:"message"`
		}
		json.Unmarshal(got.Raw, &wsErr)
		if got.Code != rest.Code || wsErr.Message != rest.Message {
			t.Errorf("%s: the doors disagree: websocket %s, REST %s", tt.note, got.Raw, strings.TrimSpace(string(raw)))
		}
	}
	for _, id := range []string{inScope.Approval.ID, outside.Approval.ID} {
		if st, _, body := s.Call(s.Token, "GET", "/api/v1/approvals/"+id, nil, nil); st != 200 || !strings.Contains(string(body), `"status":"pending"`) {
			t.Errorf("after the refusals, %s: %d %s, want it still pending", id, st, body)
		}
	}
}
