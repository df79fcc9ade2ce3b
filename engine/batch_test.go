package engine

import (
	"reflect"
	"strings"
	"testing"
)

// TestEvaluateBatch: a batch decides each call as Evaluate does, in order,
// and resolves its paths through one BatchResolvePath resolver made for it.
func TestEvaluateBatch(t *testing.T) {
	perms := `
enabled: true
schema: tiered_policy
tools: {bash: ask, read_file: allow, write_file: ask}
rules:
  - {id: no-push, tools: [bash], pattern: "git push *", action: deny}
external_directory: {"*": ask}
`
	var made, looked int
	opts := testOpts
	// /ws/project/link points outside the workspace; the batch resolver
	// knows it, the plain one does not.
	opts.ResolvePath = func(p string) string { return p }
	opts.BatchResolvePath = func() func(string) string {
		made++
		return func(p string) string {
			looked++
			return strings.Replace(p, "/ws/project/link", "/elsewhere", 1)
		}
	}
	e, probs := compileYAMLOpts(t, perms, "", opts)
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	reqs := []Request{*shellCall("bash", "git push origin main"), *pathCall("read_file", "src/a.go"),
		*shellCall("bash", "ls"), *pathCall("read_file", "link/b.go")}
	got := make([]Decision, len(reqs))
	e.EvaluateBatch(reqs, got)
	if made != 1 || looked == 0 {
		t.Errorf("batch resolvers made %d (want 1), paths looked up %d (want > 0)", made, looked)
	}
	for i := range reqs[:3] {
		if want := e.Evaluate(&reqs[i]); !reflect.DeepEqual(got[i], want) {
			t.Errorf("call %d: batch gave %+v, Evaluate gave %+v", i, got[i], want)
		}
	}
	if got[0].Level != Deny || got[2].Level != Ask {
		t.Errorf("shell calls: got %s and %s, want deny (the rule) and ask (the tool level)", got[0].Level, got[2].Level)
	}
	if got[3].Level != Ask || !reflect.DeepEqual(got[3].ExternalPaths, []string{"/elsewhere/b.go"}) {
		t.Errorf("link call: got %s %v, want ask [/elsewhere/b.go] (through the batch resolver)", got[3].Level, got[3].ExternalPaths)
	}
	if d := e.Evaluate(&reqs[3]); d.Level != Allow {
		t.Errorf("link call alone: got %s, want allow (Evaluate keeps ResolvePath)", d.Level)
	}
}
