package peers

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"

	"github.com/toolgate/toolgate/engine"
)

var benchSizes = flag.String("peers.sizes", "10,1000,10000", "policy sizes of BenchmarkPeers, comma-separated")

// TestEnginesAgree checks that every engine decides every shape as
// toolgate's expected level at two sizes, and that a broken answer would be
// caught: the check fails when an expected level or cause is changed.
func TestEnginesAgree(t *testing.T) {
	for _, n := range []int{10, 1000} {
		c, err := Compile(Rules(n))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Check(Shapes); err != nil {
			t.Errorf("size %d: %v", n, err)
		}
		wrong := []Shape{Shapes[0], Shapes[0]}
		wrong[0].Want = policy.Deny
		wrong[1].Cause = engine.CauseToolLevel
		for _, w := range wrong {
			if c.Check([]Shape{w}) == nil {
				t.Errorf("size %d: a wrong expectation %+v passes the check", n, w)
			}
		}
	}
}

// TestPeersFindEveryRule checks the peers' index against the rules
// themselves: for each generated rule, a value it matches is decided by
// Cedar and OPA as toolgate decides it, and so is a shell rule's bare
// command (a trailing " *" also matches nothing), so no rule is filed where
// a call does not look and the globs mean the same.
func TestPeersFindEveryRule(t *testing.T) {
	rules := Rules(200)
	c, err := Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		value := strings.ReplaceAll(strings.ReplaceAll(r.Pattern, "**", "a/b"), "*", "--x")
		call := Call{r.Tools[0], map[string]any{"command": value}}
		if !isShell(r.Tools[0]) {
			call.Args = map[string]any{"path": value}
		}
		calls := []Call{call}
		if isShell(r.Tools[0]) {
			calls = append(calls, Call{r.Tools[0], map[string]any{"command": strings.TrimSuffix(r.Pattern, " *")}})
		}
		for _, call := range calls {
			want := c.Engines[0].Bind(call)()
			if want != r.Action && want != max(r.Action, policy.Ask) {
				t.Errorf("%s: toolgate decides %v as %s, the rule says %s", r.ID, call.Args, want, r.Action)
			}
			for _, e := range c.Engines[1:] {
				if got := e.Bind(call)(); got != want {
					t.Errorf("%s: %s decides %v as %s, toolgate %s", r.ID, e.Name(), call.Args, got, want)
				}
			}
		}
	}
}

// TestPathRuleShape checks the rule the path_rule shape meets: gen_3, an
// allow rule on /srv/proj3/**, the same at every size.
func TestPathRuleShape(t *testing.T) {
	for _, n := range []int{10, 1000} {
		r := Rules(n)[len(headRules)+3]
		if r.ID != "gen_3" || r.Pattern != "/srv/proj3/**" || r.Action != policy.Allow {
			t.Errorf("size %d: rule %d is %+v, want gen_3 allowing /srv/proj3/**", n, len(headRules)+3, r)
		}
	}
}

// TestIndexKey checks the literal prefix a rule is filed under.
func TestIndexKey(t *testing.T) {
	for _, c := range []struct{ note, tool, pattern, want string }{
		{"two literal words", "bash", "make deploy *", "make deploy"},
		{"capped at three words", "bash", "docker compose task7 up *", "docker compose task7"},
		{"glob in the first word", "bash", "*.sh *", ""},
		{"literal command", "bash", "git status", "git status"},
		{"path: empty first part, two segments", "read_file", "/srv/proj3/**", "/srv/proj3"},
		{"path glob in a segment", "read_file", "/srv/p*/x", "/srv"},
	} {
		if got := IndexKey(c.tool, c.pattern); got != c.want {
			t.Errorf("%s: IndexKey(%q) = %q, want %q", c.note, c.pattern, got, c.want)
		}
	}
}

// BenchmarkPeers: size=<rules>/<shape>/<engine>, each engine's decision
// checked before the cell is timed. The engines of a cell run one after
// the other; cmd/sidebyside interleaves whole rounds and reports medians.
func BenchmarkPeers(b *testing.B) {
	for _, f := range strings.Split(*benchSizes, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			b.Fatal(err)
		}
		c, err := Compile(Rules(n))
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Check(Shapes); err != nil {
			b.Fatalf("size %d: %v", n, err)
		}
		for _, s := range Shapes {
			for _, e := range c.Engines {
				decide := e.Bind(s.Call)
				b.Run(fmt.Sprintf("size=%d/%s/%s", n, s.Name, e.Name()), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						decide()
					}
				})
			}
		}
	}
}

// TestWriteTable checks the goal column: at most Cedar's time and at most
// 1/20 of OPA's, each bound included.
func TestWriteTable(t *testing.T) {
	for _, c := range []struct {
		note          string
		tg, cedar, op float64
		want          string
	}{
		{"below both", 1000, 2000, 40000, "| 0.50 | 1/40 | met |"},
		{"equal to Cedar, 1/20 of OPA", 1000, 1000, 20000, "| 1.00 | 1/20 | met |"},
		{"above Cedar", 1500, 1000, 40000, "| 1.50 | 1/27 | **not met** |"},
		{"above 1/20 of OPA", 1000, 2000, 10000, "| 0.50 | 1/10 | **not met** |"},
	} {
		var b strings.Builder
		WriteTable(&b, []Cell{{Size: 1000, Shape: "s", Readings: []Reading{{c.tg, 1}, {c.cedar, 2}, {c.op, 30}}}})
		if !strings.Contains(b.String(), "| 1,000 | s |") || !strings.Contains(b.String(), c.want) {
			t.Errorf("%s: table\n%s\nwant a row ending %q", c.note, b.String(), c.want)
		}
	}
}
