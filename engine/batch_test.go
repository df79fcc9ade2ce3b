package engine

import (
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
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
	if got[0].Level != policy.Deny || got[2].Level != policy.Ask {
		t.Errorf("shell calls: got %s and %s, want deny (the rule) and ask (the tool level)", got[0].Level, got[2].Level)
	}
	if got[3].Level != policy.Ask || !reflect.DeepEqual(got[3].ExternalPaths, []string{"/elsewhere/b.go"}) {
		t.Errorf("link call: got %s %v, want ask [/elsewhere/b.go] (through the batch resolver)", got[3].Level, got[3].ExternalPaths)
	}
	if d := e.Evaluate(&reqs[3]); d.Level != policy.Allow {
		t.Errorf("link call alone: got %s, want allow (Evaluate keeps ResolvePath)", d.Level)
	}
}

// TestEvaluateBatchLooksEachWordUpOnce: a batch asks KindOf about each bare
// word once, whatever number of its calls name it, and decides as Evaluate
// does (a link found once is a link in every call); a new batch, or a
// single Evaluate, asks again.
func TestEvaluateBatchLooksEachWordUpOnce(t *testing.T) {
	asked := map[string]int{}
	opts := testOpts
	opts.ResolvePath = func(p string) string {
		if p == "/ws/project/evil" {
			return "/etc/shadow"
		}
		return p
	}
	opts.KindOf = func(p string) FileKind {
		asked[p]++
		if p == "/ws/project/evil" {
			return Symlink
		}
		return NoFile
	}
	e, probs := compileYAMLOpts(t, "enabled: true\nschema: tiered_policy\ntools: {bash: allow}\nexternal_directory: {\"*\": ask}\n", "", opts)
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	var reqs []Request
	for range 50 {
		reqs = append(reqs, *shellCall("bash", "npm run build"), *shellCall("bash", "cat evil"))
	}
	got := make([]Decision, len(reqs))
	e.EvaluateBatch(reqs, got)
	for i, d := range got {
		if want := e.Evaluate(&reqs[i]); d.Level != want.Level || d.MatchedRule != want.MatchedRule {
			t.Fatalf("call %d: batch %v (%s), alone %v (%s)", i, d.Level, d.MatchedRule, want.Level, want.MatchedRule)
		}
	}
	if got[1].Level != policy.Ask || got[99].Level != policy.Ask {
		t.Errorf("cat evil (a link out of the workspace): %v, %v; want ask", got[1].Level, got[99].Level)
	}
	// 100 batch calls and 100 single ones: the batch asked once a word.
	if asked["/ws/project/run"] != 51 || asked["/ws/project/evil"] != 51 {
		t.Errorf("lookups: %v; want each word once in the batch and once per single call", asked)
	}
}
