package engine_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// redteamFile is the obfuscation red-team table: attempts to get a call
// allowed that one of the three policies means to ask about or deny, in the
// shapes of public bypass reports against other agents' permission systems.
const redteamFile = "testdata/redteam/cases.jsonl"

// redteamCase is one line of redteamFile.
type redteamCase struct {
	ID string `json:"id"`
	// Cause is the issue's cause number, 1-8.
	Cause int `json:"cause"`
	// Policy is careful, developer or path-only (policies_test.go).
	Policy   string         `json:"policy"`
	ToolName string         `json:"tool_name"`
	ToolArgs map[string]any `json:"tool_args"`
	// Max is the loosest level the call may get: ask (ask or deny) or deny.
	Max string `json:"max"`
	// Source names the public report the shape comes from (owner/repo#n),
	// or "own".
	Source string `json:"source"`
	Note   string `json:"note"`
	// OutOfScope, when set, says why the row is not a bypass toolgate
	// can close; the row is still decided and reported, but not failed.
	OutOfScope string `json:"out_of_scope,omitempty"`
}

// loadRedteamCases reads and checks the table: every field known, cause
// 1-8, a known policy, max ask or deny, a source, unique ids.
func loadRedteamCases(t testing.TB) []redteamCase {
	t.Helper()
	raw, err := os.ReadFile(redteamFile)
	if err != nil {
		t.Fatal(err)
	}
	var cases []redteamCase
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var c redteamCase
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("%s:%d: %v", redteamFile, n, err)
		}
		if err := c.check(); err != nil {
			t.Fatalf("%s:%d (%s): %v", redteamFile, n, c.ID, err)
		}
		if seen[c.ID] {
			t.Fatalf("%s:%d: duplicate id %s", redteamFile, n, c.ID)
		}
		seen[c.ID] = true
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

func (c redteamCase) check() error {
	switch {
	case c.ID == "":
		return fmt.Errorf("no id")
	case c.Cause < 1 || c.Cause > 8:
		return fmt.Errorf("cause %d not in 1-8", c.Cause)
	case !contains(policyNames, c.Policy):
		return fmt.Errorf("unknown policy %q", c.Policy)
	case c.Max != "ask" && c.Max != "deny":
		return fmt.Errorf("max %q is neither ask nor deny", c.Max)
	case c.Source == "":
		return fmt.Errorf("no source")
	case c.ToolName == "" || c.ToolArgs == nil:
		return fmt.Errorf("no tool_name or tool_args")
	}
	return nil
}

// maxLevel is Max as a Level.
func (c redteamCase) maxLevel() policy.Level {
	l, _ := policy.ParseLevel(c.Max)
	return l
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fill replaces the placeholders {{ws}}, {{home}}, {{trusted}}, {{outside}}
// and {{root}} in every string of v, at any depth, with the fixture's
// directories. It returns a copy.
func (f *issueFixture) fill(v any) any {
	switch x := v.(type) {
	case string:
		return strings.NewReplacer("{{ws}}", f.ws, "{{home}}", f.home, "{{trusted}}", f.trusted,
			"{{outside}}", f.outside, "{{root}}", f.root).Replace(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = f.fill(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = f.fill(e)
		}
		return out
	}
	return v
}

// TestRedteamCasesPerCause: the table keeps at least ten attempts for each
// of the issue's eight causes, so no cause is tested by a token row.
func TestRedteamCasesPerCause(t *testing.T) {
	per := map[int]int{}
	for _, c := range loadRedteamCases(t) {
		per[c.Cause]++
	}
	for cause := 1; cause <= 8; cause++ {
		if per[cause] < 10 {
			t.Errorf("cause %d: %d attempts, want at least 10", cause, per[cause])
		}
	}
}

// TestRedteam: no attempt of the table gets a level looser than its max
// under its policy. A failing row is a bypass of the engine; it stays
// failing until the engine is fixed (rows are never weakened to pass).
func TestRedteam(t *testing.T) {
	f := newIssueFixture(t)
	cases := loadRedteamCases(t)
	tried, leaked, outOfScope := map[int]int{}, map[int][]string{}, map[int]int{}
	for _, c := range cases {
		args := f.fill(c.ToolArgs).(map[string]any)
		d := f.evaluate(c.Policy, c.ToolName, args)
		tried[c.Cause]++
		if d.Level >= c.maxLevel() {
			continue
		}
		msg := fmt.Sprintf("%s (cause %d, %s, %s): %s %s: got %s (rule %q), want %s or stricter",
			c.ID, c.Cause, c.Policy, c.Source, c.ToolName, clipArgs(args), d.Level, d.MatchedRule, c.Max)
		if c.OutOfScope != "" {
			outOfScope[c.Cause]++
			t.Logf("out of scope, not failed: %s; reason: %s", msg, c.OutOfScope)
			continue
		}
		leaked[c.Cause] = append(leaked[c.Cause], c.ID)
		t.Errorf("LOOSER: %s", msg)
	}
	causes := make([]int, 0, len(tried))
	for cause := range tried {
		causes = append(causes, cause)
	}
	sort.Ints(causes)
	for _, cause := range causes {
		t.Logf("cause %d: %d attempts, %d looser than allowed %v, %d looser but out of scope",
			cause, tried[cause], len(leaked[cause]), leaked[cause], outOfScope[cause])
	}
}

// clipArgs formats tool arguments for a failure message, shortened.
func clipArgs(args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Sprint(args)
	}
	s := string(b)
	if len(s) > 200 {
		s = s[:120] + "..." + s[len(s)-60:]
	}
	return s
}

// readmeRow matches a row of docs/decisions.md's obfuscation table: instance, policy, the call
// as `tool` `tool_args JSON`, the level before the obfuscation fixes and the level now.
var readmeRow = regexp.MustCompile("^\\| (.+?) \\| (careful|developer|path-only) \\| `([a-z_]+)` `(.+)` \\| (allow|ask|deny) \\| (allow|ask|deny) \\|$")

// TestDocsStricterExamples decides each row of docs/decisions.md's
// "Obfuscation: calls that were allowed, by example" table under its policy
// and checks the level the page says it gets now, so the page stays true.
func TestDocsStricterExamples(t *testing.T) {
	raw, err := os.ReadFile("../docs/decisions.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n### Obfuscation: calls that were allowed, by example")
	if !ok {
		t.Fatal("docs/decisions.md has no obfuscation table")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	f := newIssueFixture(t)
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		m := readmeRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows++
		text := strings.NewReplacer("<trusted>", f.trusted, "<ws>", f.ws, "<home>", f.home).Replace(m[4])
		var args map[string]any
		if err := json.Unmarshal([]byte(text), &args); err != nil {
			t.Errorf("README row %q: tool_args: %v", m[1], err)
			continue
		}
		want, _ := policy.ParseLevel(m[6])
		if d := f.evaluate(m[2], m[3], args); d.Level != want {
			t.Errorf("README row %q: %s %s under %s: got %s (rule %q), README says %s",
				m[1], m[3], clipArgs(args), m[2], d.Level, d.MatchedRule, want)
		}
	}
	if rows < 10 {
		t.Fatalf("found %d rows in README's D6 table, want at least 10", rows)
	}
}
