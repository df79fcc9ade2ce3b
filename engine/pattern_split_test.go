package engine

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/engine/builtin"
)

// TestSplitRegexSameMatches checks that a long regexp compiled one top-level
// alternative at a time (compiledRegex.addSplit) matches exactly the values
// the whole regexp matches: every re: pattern of the package built-in rules
// against every command of the labelled corpus, each also with \ as / and
// a few spellings that stress anchors and case.
func TestSplitRegexSameMatches(t *testing.T) {
	var b struct {
		Rules []struct {
			ID      string `yaml:"id"`
			Pattern string `yaml:"pattern"`
		} `yaml:"rules"`
	}
	if err := yaml.Unmarshal(builtin.Default, &b); err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, f := range []string{"dangerous_tune.txt", "dangerous_heldout.txt", "benign_tune.txt", "benign_heldout.txt"} {
		data, err := os.ReadFile("testdata/corpus/" + f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			cmd := line[strings.LastIndexByte(line, '\t')+1:]
			values = append(values, cmd, strings.ToUpper(cmd), "x; "+cmd+"\nid")
		}
	}
	split := 0
	for _, r := range b.Rules {
		expr, ok := strings.CutPrefix(r.Pattern, "re:")
		if !ok {
			continue
		}
		m, _, err := compilePattern(r.Pattern)
		if err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		if len(m.regexps().res) > 1 {
			split++
		}
		whole := regexp.MustCompile(expr)
		for _, v := range values {
			want := whole.MatchString(v) || whole.MatchString(strings.ReplaceAll(v, `\`, "/"))
			if got := m.matchRegex(v); got != want {
				t.Errorf("%s on %q: split matcher got %v, whole regexp %v", r.ID, v, got, want)
			}
		}
	}
	if split == 0 {
		t.Error("no built-in pattern was split: the test checks nothing")
	}
	t.Logf("%d built-in patterns split, %d values", split, len(values))
}
