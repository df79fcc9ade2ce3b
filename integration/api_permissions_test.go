package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// apiError is the error body of every route.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details []struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"details"`
	} `json:"error"`
}

// wantStatus checks a status and, for a 400, that a detail names field.
func wantStatus(t *testing.T, note string, gotStatus int, body []byte, want int, field string) {
	t.Helper()
	if gotStatus != want {
		t.Errorf("%s: status = %d, want %d; body %s", note, gotStatus, want, body)
		return
	}
	if field == "" {
		return
	}
	var e apiError
	_ = json.Unmarshal(body, &e)
	for _, d := range e.Error.Details {
		if d.Field == field {
			return
		}
	}
	t.Errorf("%s: no detail names field %q: %s", note, field, body)
}

// TestAPIPermissionsCRUD drives every policy route, happy paths and 4xx.
func TestAPIPermissionsCRUD(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	tok := s.Token
	call := func(method, path string, body any) (int, []byte) {
		t.Helper()
		st, _, b := s.Call(tok, method, path, body, nil)
		return st, b
	}

	t.Run("section ETag and If-Match", func(t *testing.T) {
		st, h, body := s.Call(tok, "GET", "/api/v1/permissions", nil, nil)
		etag := h.Get("ETag")
		if st != 200 || etag == "" {
			t.Fatalf("GET permissions = %d etag %q", st, etag)
		}
		sec := DecodeJSON[map[string]any](t, body)
		sec["deny_guidance_message"] = "ask an admin"
		st, _, body = s.Call(tok, "PUT", "/api/v1/permissions", sec, http.Header{"If-Match": {etag}})
		wantStatus(t, "PUT with the current ETag", st, body, 200, "")
		st, _, body = s.Call(tok, "PUT", "/api/v1/permissions", sec, http.Header{"If-Match": {etag}})
		wantStatus(t, "PUT with a stale ETag", st, body, 412, "")
		if !strings.Contains(s.ReadFile("config.yaml"), "ask an admin") {
			t.Errorf("config.yaml lacks the new message")
		}
		bad := DecodeJSON[map[string]any](t, body)
		_ = bad
		sec["defaults"] = map[string]any{"*": "maybe"}
		st, _, body = s.Call(tok, "PUT", "/api/v1/permissions", sec, nil)
		wantStatus(t, "PUT with an invalid level", st, body, 400, "defaults.*")
		st, _, body = s.Call(tok, "PUT", "/api/v1/permissions", `{"enabled": tru`, nil)
		wantStatus(t, "PUT with bad JSON", st, body, 400, "")
	})

	t.Run("settings", func(t *testing.T) {
		st, body := call("PATCH", "/api/v1/permissions/settings", map[string]any{"permission_mode": "strict"})
		wantStatus(t, "PATCH mode", st, body, 200, "")
		if got := DecodeJSON[map[string]any](t, body)["permission_mode"]; got != "strict" {
			t.Errorf("permission_mode = %v, want strict", got)
		}
		st, body = call("GET", "/api/v1/permissions/settings", nil)
		wantStatus(t, "GET settings", st, body, 200, "")
		st, body = call("PATCH", "/api/v1/permissions/settings", map[string]any{"permission_mode": "lax"})
		wantStatus(t, "invalid mode", st, body, 400, "permission_mode")
		st, body = call("PATCH", "/api/v1/permissions/settings", map[string]any{"colour": "red"})
		wantStatus(t, "unknown setting", st, body, 400, "colour")
		st, body = call("PATCH", "/api/v1/permissions/settings", map[string]any{"defaults": map[string]any{"*": "nope"}})
		wantStatus(t, "invalid default level", st, body, 400, "defaults.*")
	})

	t.Run("tools", func(t *testing.T) {
		st, body := call("PUT", "/api/v1/permissions/tools/mcp_fetch_webpage", map[string]any{"level": "deny"})
		wantStatus(t, "PUT tool", st, body, 200, "")
		st, body = call("GET", "/api/v1/permissions/tools", nil)
		if tools := DecodeJSON[map[string]map[string]any](t, body)["tools"]; st != 200 || tools["mcp_fetch_webpage"] != "deny" {
			t.Errorf("GET tools = %d %s", st, body)
		}
		st, body = call("PUT", "/api/v1/permissions/tools/bash", map[string]any{"level": "sometimes"})
		wantStatus(t, "invalid level", st, body, 400, "level")
		st, body = call("PUT", "/api/v1/permissions/tools/bash", map[string]any{"level": "ask", "extra": 1})
		wantStatus(t, "unknown field", st, body, 400, "extra")
		st, body = call("DELETE", "/api/v1/permissions/tools/mcp_fetch_webpage", nil)
		wantStatus(t, "DELETE tool", st, body, 204, "")
		st, body = call("DELETE", "/api/v1/permissions/tools/mcp_fetch_webpage", nil)
		wantStatus(t, "DELETE absent tool", st, body, 404, "")
	})

	t.Run("rules", func(t *testing.T) {
		rule := map[string]any{"id": "no_curl", "tools": []string{"bash"}, "pattern": "curl *", "action": "deny"}
		st, body := call("POST", "/api/v1/permissions/rules", rule)
		wantStatus(t, "create", st, body, 201, "")
		st, body = call("POST", "/api/v1/permissions/rules", rule)
		wantStatus(t, "create twice", st, body, 409, "")
		if e := DecodeJSON[apiError](t, body); e.Error.Message != `rules id "no_curl": already exists` {
			t.Errorf("create twice: message %q", e.Error.Message)
		}
		st, body = call("POST", "/api/v1/permissions/rules", map[string]any{"tools": []string{"bash"}, "pattern": "re:(", "action": "deny"})
		wantStatus(t, "bad regex", st, body, 400, "pattern")
		st, body = call("POST", "/api/v1/permissions/rules", map[string]any{"tools": []string{"bash"}, "pattern": "x", "action": "block"})
		wantStatus(t, "invalid action", st, body, 400, "action")
		st, body = call("POST", "/api/v1/permissions/rules", map[string]any{"tools": []string{"bash"}, "pattern": "x", "severity": "HUGE"})
		wantStatus(t, "invalid severity", st, body, 400, "severity")
		st, body = call("POST", "/api/v1/permissions/rules", map[string]any{"tools": []string{"bash"}, "pattern": "x", "action": "ask", "colour": 1})
		wantStatus(t, "unknown field", st, body, 400, "colour")
		st, body = call("POST", "/api/v1/permissions/rules", "{not json")
		wantStatus(t, "bad JSON", st, body, 400, "")
		st, body = call("GET", "/api/v1/permissions/rules/no_curl", nil)
		wantStatus(t, "get", st, body, 200, "")
		st, body = call("GET", "/api/v1/permissions/rules/nope", nil)
		wantStatus(t, "get unknown", st, body, 404, "")
		st, body = call("PATCH", "/api/v1/permissions/rules/no_curl", map[string]any{"action": "ask", "description": "curl asks"})
		wantStatus(t, "patch", st, body, 200, "")
		if r := DecodeJSON[map[string]any](t, body); r["action"] != "ask" || r["description"] != "curl asks" {
			t.Errorf("patched rule = %s", body)
		}
		st, body = call("PATCH", "/api/v1/permissions/rules/nope", map[string]any{"action": "ask"})
		wantStatus(t, "patch unknown", st, body, 404, "")
		// What a person reads names the rule and says what is wrong, in
		// the store's words without a package prefix.
		if e := DecodeJSON[apiError](t, body); e.Error.Message != `rules id "nope": not found` {
			t.Errorf("patch unknown: message %q", e.Error.Message)
		}
		st, body = call("PATCH", "/api/v1/permissions/rules/no_curl", map[string]any{"pattern": "re:[a"})
		wantStatus(t, "patch bad regex", st, body, 400, "pattern")
		st, body = call("GET", "/api/v1/permissions/rules", nil)
		wantStatus(t, "list", st, body, 200, "")
		st, body = call("DELETE", "/api/v1/permissions/rules/no_curl", nil)
		wantStatus(t, "delete", st, body, 204, "")
		st, body = call("DELETE", "/api/v1/permissions/rules/no_curl", nil)
		wantStatus(t, "delete unknown", st, body, 404, "")
	})

	t.Run("rule examples", func(t *testing.T) {
		rule := map[string]any{"id": "no_push", "tools": []string{"bash"}, "pattern": "git push *", "action": "deny",
			"examples": map[string]any{"match": []string{"git push origin main", "git -C repo push"}, "no_match": []string{"git pull"}}}
		st, body := call("POST", "/api/v1/permissions/rules", rule)
		wantStatus(t, "create with examples that hold", st, body, 201, "")
		if cfg := s.ReadFile("config.yaml"); !strings.Contains(cfg, "no_match:") || !strings.Contains(cfg, "- git -C repo push") {
			t.Errorf("config.yaml lacks the examples:\n%s", cfg)
		}
		st, body = call("GET", "/api/v1/permissions/rules/no_push", nil)
		if ex, _ := DecodeJSON[map[string]any](t, body)["examples"].(map[string]any); st != 200 || len(ex["match"].([]any)) != 2 {
			t.Errorf("GET rule = %d %s, want its examples", st, body)
		}
		bad := map[string]any{"id": "no_pull", "tools": []string{"bash"}, "pattern": "git pull *", "action": "deny",
			"examples": map[string]any{"match": []string{"git fetch"}}}
		st, body = call("POST", "/api/v1/permissions/rules", bad)
		wantStatus(t, "an example that does not hold", st, body, 400, "permissions.rules[1].examples.match[0]")
		if !strings.Contains(string(body), `rule \"no_pull\" does not match its example \"git fetch\"`) {
			t.Errorf("the 400 does not name the rule and the example: %s", body)
		}
		st, body = call("PATCH", "/api/v1/permissions/rules/no_push", map[string]any{"pattern": "git push --force *"})
		wantStatus(t, "a pattern change that breaks an example", st, body, 400, "permissions.rules[0].examples.match[0]")
		st, body = call("POST", "/api/v1/permissions/rules", map[string]any{"tools": []string{"bash"}, "pattern": "x *", "action": "ask",
			"examples": map[string]any{"match": 3}})
		wantStatus(t, "examples of the wrong shape", st, body, 400, "examples")
		if strings.Contains(s.ReadFile("config.yaml"), "no_pull") || !strings.Contains(s.ReadFile("config.yaml"), "pattern: git push *") {
			t.Errorf("a refused write changed config.yaml:\n%s", s.ReadFile("config.yaml"))
		}
		st, body = call("DELETE", "/api/v1/permissions/rules/no_push", nil)
		wantStatus(t, "delete", st, body, 204, "")
	})

	t.Run("approval overrides", func(t *testing.T) {
		o := map[string]any{"id": "o1", "tools": []string{"bash"}, "match_type": "command", "pattern": "make test", "action": "allow", "source": "user_approval"}
		st, body := call("POST", "/api/v1/permissions/approval-overrides", o)
		wantStatus(t, "add", st, body, 201, "")
		st, body = call("POST", "/api/v1/permissions/approval-overrides", o)
		wantStatus(t, "add twice", st, body, 409, "")
		o["id"], o["match_type"] = "o2", "url"
		st, body = call("POST", "/api/v1/permissions/approval-overrides", o)
		wantStatus(t, "invalid match_type", st, body, 400, "match_type")
		st, body = call("GET", "/api/v1/permissions/approval-overrides", nil)
		wantStatus(t, "list", st, body, 200, "")
		st, body = call("DELETE", "/api/v1/permissions/approval-overrides/o1", nil)
		wantStatus(t, "delete", st, body, 204, "")
		st, body = call("DELETE", "/api/v1/permissions/approval-overrides/o1", nil)
		wantStatus(t, "delete unknown", st, body, 404, "")
	})

	t.Run("external directory", func(t *testing.T) {
		st, body := call("PUT", "/api/v1/permissions/external-directory", map[string]any{"key": "/opt/data", "level": "allow"})
		wantStatus(t, "put", st, body, 200, "")
		st, body = call("GET", "/api/v1/permissions/external-directory", nil)
		if ext := DecodeJSON[map[string]map[string]any](t, body)["external_directory"]; st != 200 || ext["/opt/data"] != "allow" {
			t.Errorf("GET external = %d %s", st, body)
		}
		st, body = call("PUT", "/api/v1/permissions/external-directory", map[string]any{"key": "/opt/data", "level": "yes"})
		wantStatus(t, "invalid level", st, body, 400, "level")
		st, body = call("DELETE", "/api/v1/permissions/external-directory?key=/opt/data", nil)
		wantStatus(t, "delete", st, body, 204, "")
		st, body = call("DELETE", "/api/v1/permissions/external-directory?key=/opt/data", nil)
		wantStatus(t, "delete unknown", st, body, 404, "")
		st, body = call("DELETE", "/api/v1/permissions/external-directory", nil)
		wantStatus(t, "delete without key", st, body, 400, "key")
	})

	t.Run("owner scopes", func(t *testing.T) {
		scopes := map[string]any{"owner_scopes": map[string]any{"feishu": map[string]any{"u1": map[string]any{"tools": map[string]any{"bash": "deny"}, "defaults": map[string]any{"*": "ask"}}}}}
		st, body := call("PUT", "/api/v1/permissions/owner-scopes", scopes)
		wantStatus(t, "put", st, body, 200, "")
		st, body = call("GET", "/api/v1/permissions/owner-scopes", nil)
		wantStatus(t, "get", st, body, 200, "")
		if !strings.Contains(string(body), `"bash":"deny"`) {
			t.Errorf("owner scopes = %s", body)
		}
		bad := map[string]any{"owner_scopes": map[string]any{"feishu": map[string]any{"u1": map[string]any{"tools": map[string]any{"bash": "never"}}}}}
		st, body = call("PUT", "/api/v1/permissions/owner-scopes", bad)
		wantStatus(t, "invalid level", st, body, 400, "owner_scopes.feishu.u1.tools.bash")
	})

	t.Run("builtin rules and validate", func(t *testing.T) {
		st, body := call("GET", "/api/v1/permissions/builtin-rules", nil)
		if b := DecodeJSON[map[string]any](t, body); st != 200 || b["source"] != "package" {
			t.Errorf("builtin-rules = %d %s", st, body)
		}
		before := s.ReadFile("config.yaml")
		sec := map[string]any{"schema": "tiered_policy", "rules": []any{map[string]any{"id": "r", "tools": []any{"bash", "read_file"}, "pattern": "x", "action": "deny"}}}
		st, body = call("POST", "/api/v1/permissions/validate", sec)
		if v := DecodeJSON[map[string]any](t, body); st != 200 || v["valid"] != false {
			t.Errorf("validate mixed categories = %d %s", st, body)
		}
		st, body = call("POST", "/api/v1/permissions/validate", map[string]any{"schema": "tiered_policy", "tools": map[string]any{"bash": "ask"}})
		if v := DecodeJSON[map[string]any](t, body); st != 200 || v["valid"] != true {
			t.Errorf("validate good section = %d %s", st, body)
		}
		if s.ReadFile("config.yaml") != before {
			t.Errorf("validate wrote config.yaml")
		}
	})
}
