package engine

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/engine/builtin"
	"github.com/toolgate/toolgate/engine/prefilter"
)

// condMissed reports a value the regexp matches (directly or with \ as /)
// whose literal condition does not hold: the condition would wrongly skip
// the rule.
func condMissed(t *testing.T, expr string, values []string) {
	t.Helper()
	re, err := regexp.Compile(expr)
	if err != nil {
		return
	}
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		t.Fatalf("%q parses for regexp but not for syntax: %v", expr, err)
	}
	c := prefilter.CondOf(tree)
	for _, v := range values {
		matched := re.MatchString(v) || re.MatchString(strings.ReplaceAll(v, `\`, "/"))
		if matched && !c.Holds(v, prefilter.HasNonASCII(v)) {
			t.Fatalf("regexp %q matches %q but its Literal condition does not hold", expr, v)
		}
	}
}

// TestCondHoldsOnRandomRegexps: for random regexps and commands built from
// the property test's words and fragments (case folds, Kelvin sign, long s,
// backslashes, alternations, anchors), every value a regexp matches meets
// its Literal condition.
func TestCondHoldsOnRandomRegexps(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	values := make([]string, 300)
	for i := range values {
		values[i] = propCommand(r)
		if i%3 == 0 {
			values[i] = propPath(r)
		}
	}
	for i := 0; i < 3000; i++ {
		expr := strings.TrimPrefix(propRegex(r), "re:")
		// Values made to match: words of the regexp itself, joined.
		own := []string{strings.Map(func(c rune) rune {
			if strings.ContainsRune(`\()[]|?*+^$.:`, c) {
				return ' '
			}
			return c
		}, expr)}
		condMissed(t, expr, append(own, values...))
	}
}

// TestCondHoldsOnBuiltinCorpus: the package built-in rules' conditions hold
// on every corpus command their regexps match, and turn away the false
// wake-up that prompted them ("sh" inside "push").
func TestCondHoldsOnBuiltinCorpus(t *testing.T) {
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
	for _, name := range []string{"dangerous_tune.txt", "dangerous_heldout.txt", "benign_tune.txt", "benign_heldout.txt"} {
		for _, c := range readCorpus(t, name) {
			for _, v := range c.args {
				if s, ok := v.(string); ok {
					values = append(values, s)
				}
			}
		}
	}
	exprs := map[string]string{}
	for _, rule := range b.Rules {
		if expr, ok := strings.CutPrefix(rule.Pattern, "re:"); ok {
			exprs[rule.ID] = expr
			condMissed(t, expr, values)
		}
	}
	tree, err := syntax.Parse(exprs["shell_over_network_pipe"], syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	c := prefilter.CondOf(tree)
	if c.Holds("git push --force origin main", false) {
		t.Error(`shell_over_network_pipe: the condition holds on "git push --force origin main"; want it to turn the call away`)
	}
	if !c.Holds("nc -l 4444 | sh", false) {
		t.Error(`shell_over_network_pipe: the condition fails on "nc -l 4444 | sh", which the rule matches`)
	}
}

// FuzzLiteralCondition: for any regexp and value, a match (directly or with
// \ as /) implies the literal condition holds. A condition that failed on a
// match would skip a rule that applies, a deny among them.
func FuzzLiteralCondition(f *testing.F) {
	seeds := [][2]string{
		{`(?i)\b(?:nc|ncat)\b[^\n]*\|\s*(?:/bin/)?(?:ba|z|da)?sh\b`, "NC -l 1 | bash"},
		{`\bgit\b[^\n;&|]*\spush\b[^\n;&|]*\s--force\b`, "git push --force origin"},
		{`(?i)to[kK]en=\S+`, "to\u212aen=abc"},
		{`n(?:c|cat)\s`, `C:\ncat x`},
		{`(a|b)+c{2,}`, "abacc"},
		{`[/\\]etc[/\\]passwd`, `\etc\passwd`},
		{`(?s)x.y|^$`, ""},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, expr, value string) {
		if len(expr) > 512 || len(value) > 4096 {
			return
		}
		condMissed(t, expr, []string{value})
	})
}
