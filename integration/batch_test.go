package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type batchDecision struct {
	Level       string  `json:"level"`
	MatchedRule *string `json:"matched_rule"`
	Reason      string  `json:"reason"`
}

// TestEvaluateBatchOverHTTP: the batch route answers in order, with the same
// decisions as /evaluate one by one.
func TestEvaluateBatchOverHTTP(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: evaluateConfig})
	calls := []map[string]any{
		{"tool_name": "bash", "tool_args": map[string]any{"command": "ls -la"}},
		{"tool_name": "read_file", "tool_args": map[string]any{"path": s.Workspace + "/.env"}},
		{"tool_name": "bash", "tool_args": map[string]any{"command": "git status"}},
		{"tool_name": "bash", "tool_args": map[string]any{"command": "ls && shutdown -h now"}},
		{"tool_name": "custom_tool", "tool_args": map[string]any{}},
		{"tool_name": "bash", "tool_args": map[string]any{"command": "rm -rf /"}, "channel_id": "feishu"},
	}
	status, body := s.Do("POST", "/api/v1/evaluate/batch", map[string]any{"calls": calls})
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	got := DecodeJSON[struct {
		Decisions []batchDecision `json:"decisions"`
	}](t, body)
	if len(got.Decisions) != len(calls) {
		t.Fatalf("got %d decisions, want %d: %s", len(got.Decisions), len(calls), body)
	}
	for i, c := range calls {
		st, one := s.Do("POST", "/api/v1/evaluate", c)
		if st != 200 {
			t.Fatalf("evaluate %d: status %d: %s", i, st, one)
		}
		want := DecodeJSON[batchDecision](t, one)
		g := got.Decisions[i]
		if g.Level != want.Level || g.Reason != want.Reason || fmt.Sprint(deref(g.MatchedRule)) != fmt.Sprint(deref(want.MatchedRule)) {
			t.Errorf("call %d: batch %+v, single %+v", i, g, want)
		}
	}
	if got.Decisions[1].Level != "deny" || got.Decisions[5].MatchedRule != nil {
		t.Errorf("order: got %s", body)
	}
}

func deref(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

// TestEvaluateBatchErrors: bad calls name calls[i].<field>, more than 1,000
// calls is 400, and the route needs a token.
func TestEvaluateBatchErrors(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: evaluateConfig})
	ok := map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": "ls"}}
	many := make([]any, 1001)
	for i := range many {
		many[i] = ok
	}
	cases := []struct {
		note      string
		body      any
		wantField string
	}{
		{"missing tool_name", map[string]any{"calls": []any{ok, map[string]any{"tool_args": map[string]any{}}}}, "calls[1].tool_name"},
		{"tool_args not an object", map[string]any{"calls": []any{ok, ok, map[string]any{"tool_name": "bash", "tool_args": []any{1}}}}, "calls[2].tool_args"},
		{"unknown field in a call", map[string]any{"calls": []any{map[string]any{"tool_name": "bash", "bogus": 1}}}, "calls[0].bogus"},
		{"wrong type in a call", map[string]any{"calls": []any{map[string]any{"tool_name": 7}}}, "calls[0].tool_name"},
		{"a call that is not an object", map[string]any{"calls": []any{"bash"}}, "calls[0]"},
		{"an argument given twice in a call", `{"calls":[{"tool_name":"bash"},{"tool_name":"bash","tool_args":{"command":"ls","command":"rm -rf ~"}}]}`, "calls[1].tool_args.command"},
		{"no calls", map[string]any{}, "calls"},
		{"unknown top-level field", map[string]any{"calls": []any{ok}, "extra": true}, "extra"},
		{"1,001 calls", map[string]any{"calls": many}, "calls"},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			status, body := s.Do("POST", "/api/v1/evaluate/batch", c.body)
			if status != 400 {
				t.Fatalf("status %d, want 400: %s", status, body)
			}
			e := DecodeJSON[struct {
				Error struct {
					Code    string `json:"code"`
					Details []struct {
						Field string `json:"field"`
					} `json:"details"`
				} `json:"error"`
			}](t, body)
			if e.Error.Code != "bad_request" || len(e.Error.Details) == 0 || e.Error.Details[0].Field != c.wantField {
				t.Errorf("got %s, want field %q", body, c.wantField)
			}
		})
	}
	full := make([]any, 1000)
	for i := range full {
		full[i] = ok
	}
	if status, body := s.Do("POST", "/api/v1/evaluate/batch", map[string]any{"calls": full}); status != 200 || strings.Count(string(body), `"level"`) != 1000 {
		t.Errorf("1,000 calls: status %d, %d decisions", status, strings.Count(string(body), `"level"`))
	}
	if status, _ := s.DoToken("wrong-token", "POST", "/api/v1/evaluate/batch", map[string]any{"calls": []any{ok}}); status != 401 {
		t.Errorf("wrong token: status %d, want 401", status)
	}
}

// TestEvaluateBatchSeesSymlinks: the batch route resolves paths on the real
// file system as /evaluate does. Calls through a symlink out of the
// workspace ask, with the link's target as the external path, alongside
// calls on plain files in the same directories. A link made after one batch
// is seen by the next, since nothing is remembered between requests.
func TestEvaluateBatchSeesSymlinks(t *testing.T) {
	s := StartServer(t, ServerOptions{ConfigYAML: bypassConfig})
	outside := t.TempDir()
	outsideReal, err := filepath.EvalSymlinks(outside)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.Workspace, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.Workspace, "src", "out")); err != nil {
		t.Fatal(err)
	}
	read := func(p string) map[string]any {
		return map[string]any{"tool_name": "read_file", "tool_args": map[string]any{"path": p}}
	}
	batch := func(paths ...string) []externalDecision {
		t.Helper()
		var calls []map[string]any
		for _, p := range paths {
			calls = append(calls, read(p))
		}
		status, body := s.Do("POST", "/api/v1/evaluate/batch", map[string]any{"calls": calls})
		if status != 200 {
			t.Fatalf("status %d: %s", status, body)
		}
		return DecodeJSON[struct {
			Decisions []externalDecision `json:"decisions"`
		}](t, body).Decisions
	}
	got := batch("src/a.go", "src/out/secret.txt", "src/b.go", "src/out/sub/x", "later/y")
	want := []struct {
		level    string
		external string
	}{{"allow", ""}, {"ask", outsideReal + "/secret.txt"}, {"allow", ""}, {"ask", outsideReal + "/sub/x"}, {"allow", ""}}
	for i, w := range want {
		if got[i].Level != w.level || strings.Join(got[i].ExternalPaths, ",") != w.external {
			t.Errorf("call %d: got %s %v, want %s [%s]", i, got[i].Level, got[i].ExternalPaths, w.level, w.external)
		}
	}
	if err := os.Symlink(outside, filepath.Join(s.Workspace, "later")); err != nil {
		t.Fatal(err)
	}
	if again := batch("later/y"); again[0].Level != "ask" || strings.Join(again[0].ExternalPaths, ",") != outsideReal+"/y" {
		t.Errorf("after the link: got %s %v, want ask [%s/y]", again[0].Level, again[0].ExternalPaths, outsideReal)
	}
}

type externalDecision struct {
	Level         string   `json:"level"`
	ExternalPaths []string `json:"external_paths"`
}
