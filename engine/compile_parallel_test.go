package engine

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestCompileRulesParallelSameAsSequential compiles a list of rules with
// every kind of problem (bad pattern, partial regex, unknown and mixed
// tools, network tools, duplicate ids, denied overrides) on one goroutine
// and in chunks, and wants the same rules in the same order and the same
// problems in the same order.
func TestCompileRulesParallelSameAsSequential(t *testing.T) {
	list := make([]policy.Rule, 3*parallelChunk+17)
	for i := range list {
		r := policy.Rule{Index: i, ID: fmt.Sprintf("r%d", i%(len(list)-40)), Tools: []string{"bash"},
			Pattern: fmt.Sprintf("make t%d *", i), Action: policy.Allow}
		switch i % 11 {
		case 1:
			r.Pattern = "re:(unclosed"
		case 2:
			r.Pattern = "re:ok|(bad"
		case 3:
			r.Tools = []string{"no_such_tool"}
		case 4:
			r.Tools = []string{"bash", "read_file"}
		case 5:
			r.Tools = []string{"web_fetch"}
		case 6:
			r.Action = policy.Deny
		case 7:
			r.Pattern = " "
		}
		list[i] = r
	}
	for _, tc := range []struct {
		note string
		path string
		set  ruleSet
	}{
		{note: "user rules", path: policy.PathRules, set: setUser},
		{note: "overrides", path: policy.PathOverrides, set: setOverride},
		{note: "builtin", path: policy.PathBuiltin, set: setBuiltin},
	} {
		t.Run(tc.note, func(t *testing.T) {
			seq := &compiler{workers: 1}
			want := seq.compileRules(list, tc.path, tc.set)
			for _, workers := range []int{2, 3, 8} {
				par := &compiler{workers: workers}
				got := par.compileRules(list, tc.path, tc.set)
				if !reflect.DeepEqual(par.problems, seq.problems) {
					t.Fatalf("workers %d: %d problems, want %d (first differing order or text)", workers, len(par.problems), len(seq.problems))
				}
				if len(got.all) != len(want.all) {
					t.Fatalf("workers %d: %d rules, want %d", workers, len(got.all), len(want.all))
				}
				for i := range got.all {
					g, w := got.all[i], want.all[i]
					if g.order != w.order || g.single != w.single || g.level != w.level || g.m.raw != w.m.raw {
						t.Fatalf("workers %d: rule %d = %d %q, want %d %q", workers, i, g.order, g.single, w.order, w.single)
					}
				}
			}
			if len(seq.problems) < len(list)/2 {
				t.Fatalf("only %d problems: the list does not exercise them", len(seq.problems))
			}
		})
	}
}
