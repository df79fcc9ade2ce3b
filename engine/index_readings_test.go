package engine

import (
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/engine/builtin"
	"github.com/toolgate/toolgate/policy"
)

// TestTailMatchIsCommandMatch checks the claim the tail shortcut rests on (tailRules): a
// rule that startsAnywhere and matches a tail of a command (from a blank
// or a slash) strictly matches the command strictly. It runs every
// built-in rule so marked over every tail of every command of the
// labelled corpora, and counts that both kinds of rule are there.
func TestTailMatchIsCommandMatch(t *testing.T) {
	var b struct {
		Rules []any `yaml:"rules"`
	}
	if err := yaml.Unmarshal(builtin.Default, &b); err != nil {
		t.Fatal(err)
	}
	e, _ := Compile(map[string]any{}, b.Rules, Options{Workspace: "/ws"})
	var anywhere, anchored []*rule
	for _, r := range e.policy.builtin.all {
		if r.category != CategoryShell || r.level < policy.Ask {
			continue
		}
		if startsAnywhere(r.m) {
			anywhere = append(anywhere, r)
		} else {
			anchored = append(anchored, r)
		}
	}
	if len(anywhere) < 10 || len(anchored) < 10 {
		t.Fatalf("want both kinds among the built-in rules, got %d that start anywhere and %d anchored", len(anywhere), len(anchored))
	}
	var commands []string
	for _, name := range []string{"dangerous_tune.txt", "dangerous_heldout.txt", "benign_tune.txt", "benign_heldout.txt"} {
		for _, c := range readCorpus(t, name) {
			if cmd, ok := c.args["command"].(string); ok {
				commands = append(commands, cmd)
			}
		}
	}
	tailHits := 0
	for _, cmd := range commands {
		for k := 1; k < len(cmd); k++ {
			if cmd[k-1] != ' ' && cmd[k-1] != '/' {
				continue
			}
			tail := cmd[k:]
			for _, r := range anywhere {
				if !r.m.matchShellAs(tail, true) {
					continue
				}
				tailHits++
				if !r.m.matchShellAs(cmd, true) {
					t.Errorf("%s matches the tail %q but not the command %q", r.name, tail, cmd)
				}
			}
		}
	}
	if tailHits == 0 {
		t.Fatal("no tail met a rule: the check checked nothing")
	}
	t.Logf("%d commands, %d tail hits, %d rules start anywhere, %d anchored", len(commands), tailHits, len(anywhere), len(anchored))
}

// TestStartsAnywhere classifies patterns: only a glob that starts with *
// and a re: pattern with no start anchor may skip the tails.
func TestStartsAnywhere(t *testing.T) {
	for _, c := range []struct {
		note, pattern string
		want          bool
	}{
		{"glob led by *", "* --force*", true},
		{"glob with a literal head", "git push *", false},
		{"glob led by ?", "?m -rf *", false},
		{"literal", "git push", false},
		{"search", `re:\bsudo\b`, true},
		{"anchored", `re:^rm `, false},
		{"anchor in one branch", `re:(?:^|;)\s*sudo`, false},
		{"\\A", `re:\Asudo`, false},
		{"multi-line ^", `re:(?m)^sudo`, false},
		{"end anchor only", `re:--force$`, true},
	} {
		m, _, err := compilePattern(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.note, err)
		}
		if got := startsAnywhere(m); got != c.want {
			t.Errorf("%s: startsAnywhere(%q) = %v, want %v", c.note, c.pattern, got, c.want)
		}
	}
}
