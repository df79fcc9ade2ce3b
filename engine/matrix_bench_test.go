package engine_test

import (
	"fmt"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// matrixSizes are the policy sizes of the decision matrix.
var matrixSizes = []int{10, 1000, 10000, 100000}

// matrixRules are the rules every matrix policy holds beside the generated
// ones, one for each way a call can be decided.
var matrixRules = []any{
	map[string]any{"id": "allow_deploy", "tools": []any{"bash"}, "pattern": "make deploy *", "action": "allow"},
	map[string]any{"id": "ask_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "ask"},
	map[string]any{"id": "deny_curl", "tools": []any{"bash"}, "pattern": "curl *", "action": "deny"},
}

// matrixShapes are the call shapes of the matrix.
var matrixShapes = []struct {
	name string
	req  engine.Request
}{
	{"allow_match", engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make deploy --fast"})}},
	{"ask_match", engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "git push origin main"})}},
	{"deny_match", engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "curl http://example.com"})}},
	{"no_match", engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "npm run build --silent"})}},
	{"override_match", engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make release-notes"})}},
	{"path_inside", engine.Request{Call: engine.NewCall("read_file", map[string]any{"path": "/ws/project/src/main.go"})}},
	{"path_outside", engine.Request{Call: engine.NewCall("read_file", map[string]any{"path": "/etc/hosts"})}},
	{"compound", engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make deploy --fast && git status"})}},
	{"persona", engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make deploy --fast"}),
		Scope: &engine.Scope{AvatarMode: true, GroupDigitalAvatar: true, PrincipalUserID: "u1"}}},
}

// matrixEngine is the default policy with the matrix rules, an approval
// override and n generated rules.
func matrixEngine(tb testing.TB, n int) *engine.Engine {
	perms, b := defaultPolicy(tb, n)
	rules, _ := perms["rules"].([]any)
	perms["rules"] = append(append([]any(nil), matrixRules...), rules...)
	perms["approval_overrides"] = []any{map[string]any{"id": "ovr_notes", "tools": []any{"bash"},
		"pattern": "make release-notes", "action": "allow"}}
	e, problems := engine.Compile(perms, b, engine.Options{Workspace: "/ws/project", HomeDir: "/home/u", ResolvePath: func(p string) string { return p }})
	if len(problems) > 0 {
		tb.Fatalf("matrix policy problems: %v", problems[:min(3, len(problems))])
	}
	return e
}

// BenchmarkDecisionMatrix: size=<rules>/<shape>. Every cell checks first
// that it decides as the 10-rule policy does (the rule that decides each
// shape is among the first rules at every size), so no cell measures a
// different path. A cell that grows more than 1.5x from 10 to 100,000 rules
// is a regression (BENCHMARKS.md).
func BenchmarkDecisionMatrix(b *testing.B) {
	small := matrixEngine(b, 10)
	want := map[string]engine.Decision{}
	for _, s := range matrixShapes {
		req := s.req
		want[s.name] = small.Evaluate(&req)
	}
	for _, n := range matrixSizes {
		e := matrixEngine(b, n)
		for _, s := range matrixShapes {
			req := s.req
			if got := e.Evaluate(&req); got.Level != want[s.name].Level || got.MatchedRule != want[s.name].MatchedRule {
				b.Fatalf("size %d, %s: %s %q, want %s %q", n, s.name, got.Level, got.MatchedRule, want[s.name].Level, want[s.name].MatchedRule)
			}
			b.Run(fmt.Sprintf("size=%d/%s", n, s.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					e.Evaluate(&req)
				}
			})
		}
	}
}

// TestDecisionMatrixShapes checks what each shape of the matrix decides,
// so the benchmark measures the paths it names.
func TestDecisionMatrixShapes(t *testing.T) {
	e := matrixEngine(t, 10)
	want := map[string]policy.Level{"allow_match": policy.Allow, "ask_match": policy.Ask, "deny_match": policy.Deny,
		"override_match": policy.Allow, "path_inside": policy.Allow, "path_outside": policy.Ask, "compound": policy.Ask}
	for _, s := range matrixShapes {
		req := s.req
		d := e.Evaluate(&req)
		if w, ok := want[s.name]; ok && d.Level != w {
			t.Errorf("%s: %s (%s), want %s", s.name, d.Level, d.MatchedRule, w)
		}
	}
}

// TestDecisionMatrixAllocs pins the allocations of the matrix shapes that
// take the full shell analysis, so that a change to the parse or the walk
// that costs more shows here and not only in a benchmark. A list of plain
// commands costs two: the analysis's state (result, walker, first arrays
// of its lists) and its syntax tree (read without the bash parser, whose
// tree costs an allocation a node and a word).
func TestDecisionMatrixAllocs(t *testing.T) {
	e := matrixEngine(t, 10)
	want := map[string]float64{"compound": 2, "deny_match": 2}
	for _, s := range matrixShapes {
		w, ok := want[s.name]
		if !ok {
			continue
		}
		req := s.req
		if got := testing.AllocsPerRun(200, func() { e.Evaluate(&req) }); got != w {
			t.Errorf("%s: got %v allocs per Evaluate, want %v", s.name, got, w)
		}
	}
}
