package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/approval"
)

// TestCheckDeciderWordsARefusal checks what the model reads of a refused
// call: a policy's deny its reason, an ask a person refused who refused
// it and their comment (not the ask's "Approval required" reason). The
// server here answers with the API's own /api/v1/check answer type, as
// the real one would after each ending; the integration test
// TestMCPGatewayInFrontOfFilesystemServer has the real server's.
func TestCheckDeciderWordsARefusal(t *testing.T) {
	rule := "tools.mcp__fs__edit_file"
	asked := api.EvaluateResponse{Level: "ask", MatchedRule: &rule, Reason: "Approval required for mcp__fs__edit_file (rule: tools.mcp__fs__edit_file)"}
	cases := []struct {
		note   string
		answer api.CheckResponse
		want   []string
		not    []string
	}{
		{note: "a policy deny keeps the policy's reason",
			answer: api.CheckResponse{Decision: "deny", EvaluateResponse: api.EvaluateResponse{Level: "deny", Reason: "Denied by rule no_secrets"}},
			want:   []string{"Denied by rule no_secrets"}},
		{note: "a person's deny names who refused and their comment",
			answer: api.CheckResponse{Decision: "deny", EvaluateResponse: asked, Approval: &approval.Approval{ID: "ap_1",
				Status: approval.StatusDenied, DecidedBy: "alice", Comment: "not that file", Decision: "deny"}},
			want: []string{"alice refused it when asked", "ap_1", "not that file"}, not: []string{"Approval required"}},
		{note: "a person's deny without a comment",
			answer: api.CheckResponse{Decision: "deny", EvaluateResponse: asked, Approval: &approval.Approval{ID: "ap_2",
				Status: approval.StatusDenied, DecidedBy: "bob", Decision: "deny"}},
			want: []string{"bob refused it when asked (approval ap_2)"}, not: []string{"Approval required", "): "}},
		{note: "an ask that expired says so",
			answer: api.CheckResponse{Decision: "deny", EvaluateResponse: asked, Approval: &approval.Approval{ID: "ap_3",
				Status: approval.StatusExpired, DecidedBy: approval.PrincipalSystem, Comment: "no answer before the timeout", Decision: "deny"}},
			want: []string{"approval ap_3 expired unanswered"}, not: []string{"refused it when asked"}},
		{note: "an ask whose approval could not be stored keeps the reason",
			answer: api.CheckResponse{Decision: "deny", EvaluateResponse: api.EvaluateResponse{Level: "ask", Reason: "this server takes no approvals"}},
			want:   []string{"this server takes no approvals"}},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/v1/check" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(c.answer)
			}))
			defer srv.Close()
			d := &checkDecider{o: &mcpOptions{conn: conn{url: srv.URL}, name: "fs", wait: 5}, token: "t"}
			v := d.Decide(context.Background(), "edit_file", json.RawMessage(`{}`))
			if v.Allow {
				t.Fatalf("a refused call was allowed")
			}
			for _, w := range c.want {
				if !strings.Contains(v.Reason, w) {
					t.Errorf("reason %q, want it to say %q", v.Reason, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(v.Reason, n) {
					t.Errorf("reason %q should not say %q", v.Reason, n)
				}
			}
		})
	}
}
