package engine

import (
	"sync"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestPersonaConcurrently: persona calls from many goroutines, including the
// first use of owner patterns' lazily compiled regexps, decide alike (run
// with -race).
func TestPersonaConcurrently(t *testing.T) {
	const doc = `schema: tiered_policy
tools: {bash: allow, read_file: allow}
owner_scopes:
  feishu:
    ou_1:
      tools:
        bash: {patterns: {"re:^git (status|log)": allow, "re:rm\\s+-rf": deny}, "*": ask}
        read_file: {patterns: {"re:\\.env$": deny}}
      defaults: {"*": allow}`
	reqs := []*Request{
		persona(shellCall("bash", "git status"), "feishu", "ou_1"),
		persona(shellCall("bash", `\rm -rf build`), "feishu", "ou_1"),
		persona(pathCall("read_file", "/ws/project/x/../.env"), "feishu", "ou_1"),
		persona(pathCall("read_file", "src/a.go"), "feishu", "ou_1"),
	}
	ref, _ := compileYAML(t, doc, "")
	want := make([]Decision, len(reqs))
	for i, r := range reqs {
		want[i] = ref.Evaluate(r)
	}
	e, _ := compileYAML(t, doc, "")
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 30; n++ {
				for i, r := range reqs {
					if got := e.Evaluate(r); got.Level != want[i].Level || got.MatchedRule != want[i].MatchedRule {
						t.Errorf("%v: got %s %q, want %s %q", r.Call.Args(), got.Level, got.MatchedRule, want[i].Level, want[i].MatchedRule)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if want[0].Level != policy.Allow || want[1].Level != policy.Deny || want[2].Level != policy.Deny || want[3].Level != policy.Allow {
		t.Errorf("decisions: %+v", want)
	}
}
