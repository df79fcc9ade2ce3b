package engine

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/engine/builtin"
	"github.com/toolgate/toolgate/engine/shell"
	"github.com/toolgate/toolgate/policy"
)

var corpusTable = flag.String("corpus.table", "", "write the built-in rules' recall and false-positive table (markdown) to this file")

// Floors of the built-in rules' quality on the held-out half of the corpus,
// set below what the rules reached there when they were last measured (99.3%
// recall, 1.6% false positives), so that a rule change that costs recall or
// adds false positives on calls nobody tuned against fails.
const (
	minRecall       = 0.97
	maxFalsePosRate = 0.02
)

// corpusCase is one labelled line: category, tool and tool_args.
type corpusCase struct {
	line     int
	category string
	tool     string
	args     map[string]any
	text     string
}

// readCorpus reads lines `category<TAB>tool<TAB>command-or-json-args`; a
// third field starting with { is the JSON tool_args, else it is the command.
func readCorpus(t *testing.T, name string) []corpusCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "corpus", name))
	if err != nil {
		t.Fatalf("open corpus: %v", err)
	}
	defer f.Close()
	var cases []corpusCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.SplitN(line, "\t", 3)
		if len(fields) != 3 {
			t.Fatalf("%s:%d: want 3 tab-separated fields, got %d", name, n, len(fields))
		}
		c := corpusCase{line: n, category: fields[0], tool: fields[1], text: fields[2]}
		if strings.HasPrefix(fields[2], "{") {
			if err := json.Unmarshal([]byte(fields[2]), &c.args); err != nil {
				t.Fatalf("%s:%d: bad JSON args: %v", name, n, err)
			}
		} else {
			c.args = map[string]any{"command": fields[2]}
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read corpus: %v", err)
	}
	return cases
}

// builtinOnlyEngine compiles the package default built-in rules under a
// policy that allows everything else, so that only a built-in rule can make
// a call ask or deny.
func builtinOnlyEngine(t *testing.T) *Engine {
	t.Helper()
	var doc struct {
		Rules []any `yaml:"rules"`
	}
	if err := yaml.Unmarshal(builtin.Default, &doc); err != nil {
		t.Fatalf("decode builtin_rules.yaml: %v", err)
	}
	tools := map[string]any{}
	for _, name := range []string{"bash", "mcp_exec_command", "create_terminal", "read_file", "write_file", "edit_file",
		"read_text_file", "write_text_file", "write", "read", "glob_file_search", "glob", "list_dir", "list_files", "grep", "search_replace"} {
		tools[name] = "allow"
	}
	perms := map[string]any{
		"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "allow"}, "tools": tools, "external_directory": "allow",
	}
	e, problems := Compile(perms, doc.Rules, Options{Workspace: "/ws/project", HomeDir: "/home/u"})
	if len(problems) > 0 {
		t.Fatalf("Compile reported problems with the default built-in rules: %v", problems)
	}
	return e
}

// builtinHit reports whether an ask or deny built-in rule matches the call:
// the raw command or path values, or a normalized command of the shell
// analysis (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm), exactly as Evaluate collects them. It measures the
// rules themselves: a hit that does not change a decision already made ask
// by the shell-operator escalation still counts, and the escalation alone
// does not.
func builtinHit(e *Engine, req *Request) (bool, []string) {
	var v callValues
	v.category = ToolCategory(req.Call.Tool())
	e.fillValues(&v, req, nil)
	if v.category == CategoryShell && shell.NeedsFullParse(v.command) {
		v.norms = shell.AnalyzeEnv(v.command, e.shellEnv(req)).Normalized
	}
	hits := e.policy.builtin.collect(req.Call.Tool(), &v, nil)
	hits = e.policy.builtin.collectNormalized(req.Call.Tool(), &v, hits)
	var names []string
	for _, h := range hits {
		if h.level == policy.Ask || h.level == policy.Deny {
			names = append(names, h.name)
		}
	}
	return len(names) > 0, names
}

// categoryScore counts one category's cases and built-in hits.
type categoryScore struct{ total, hits int }

// corpusHalves are the two halves of each labelled file: rules are tuned on
// the tune half only; the figures that count are the held-out half's.
var corpusHalves = []string{"tune", "heldout"}

// corpusHalf says which half a corpus line belongs to: held-out when the
// FNV-1a 32-bit hash of "tool<TAB>command" is odd. The split depends only on
// the call, so no line can be moved to the half that suits the rules.
func corpusHalf(tool, text string) string {
	h := fnv.New32a()
	h.Write([]byte(tool + "\t" + text))
	if h.Sum32()%2 == 1 {
		return "heldout"
	}
	return "tune"
}

// TestCorpusSplit: every line is in the half its hash names, and no call is
// labelled both dangerous and benign.
func TestCorpusSplit(t *testing.T) {
	seen := map[string]string{}
	for _, kind := range []string{"dangerous", "benign"} {
		for _, half := range corpusHalves {
			name := kind + "_" + half + ".txt"
			for _, c := range readCorpus(t, name) {
				if got := corpusHalf(c.tool, c.text); got != half {
					t.Errorf("%s:%d %s %s: hash puts it in the %s half", name, c.line, c.tool, c.text, got)
				}
				key := c.tool + "\t" + c.text
				if prev, dup := seen[key]; dup {
					t.Errorf("%s:%d %s %s: also in %s", name, c.line, c.tool, c.text, prev)
				}
				seen[key] = name
			}
		}
	}
}

// TestBuiltinRulesCorpus measures the default built-in rules on both halves
// of the labelled corpus: recall on the dangerous calls (caught = ask or
// deny by a built-in rule) and the false-positive rate on the benign ones,
// per category. The floors apply to the held-out half.
func TestBuiltinRulesCorpus(t *testing.T) {
	e := builtinOnlyEngine(t)
	var tables strings.Builder
	for _, half := range corpusHalves {
		// decided counts the calls whose whole decision under this policy
		// (bash and every tool allow) is not allow: built-in hits, plus the
		// shell-operator escalation of docs/decisions.md, which asks about any
		// allowed command with ; & | ` < > $( ${ or a newline.
		decided := map[string][2]int{}
		score := func(name string) map[string]*categoryScore {
			scores := map[string]*categoryScore{}
			for _, c := range readCorpus(t, name) {
				req := &Request{Call: NewCall(c.tool, c.args), ChannelID: "web", Workspace: "/ws/project"}
				hit, rules := builtinHit(e, req)
				n := decided[name]
				n[0]++
				if e.Evaluate(req).Level != policy.Allow {
					n[1]++
				}
				decided[name] = n
				s := scores[c.category]
				if s == nil {
					s = &categoryScore{}
					scores[c.category] = s
				}
				s.total++
				if hit {
					s.hits++
				}
				switch {
				case hit && strings.HasPrefix(name, "benign"):
					t.Logf("false positive %s:%d %s %s -> %s", name, c.line, c.tool, c.text, rules)
				case !hit && strings.HasPrefix(name, "dangerous"):
					t.Logf("missed %s:%d [%s] %s %s", name, c.line, c.category, c.tool, c.text)
				}
			}
			return scores
		}
		dangerous := score("dangerous_" + half + ".txt")
		benign := score("benign_" + half + ".txt")
		table, recall, fpRate := corpusReport(dangerous, benign)
		fmt.Fprintf(&tables, "### %s half\n\n%s\n", half, table)
		t.Logf("%s half: recall %.1f%%, false positives %.1f%%", half, 100*recall, 100*fpRate)
		dd, bd := decided["dangerous_"+half+".txt"], decided["benign_"+half+".txt"]
		t.Logf("%s half, whole decisions: %d/%d dangerous not allowed (%.1f%%), %d/%d benign not allowed (%.1f%%, most by the operator escalation)",
			half, dd[1], dd[0], 100*float64(dd[1])/float64(dd[0]), bd[1], bd[0], 100*float64(bd[1])/float64(bd[0]))
		if half != "heldout" {
			continue
		}
		if recall < minRecall {
			t.Errorf("held-out recall = %.1f%%, want at least %.0f%%", 100*recall, 100*minRecall)
		}
		if fpRate > maxFalsePosRate {
			t.Errorf("held-out false-positive rate = %.1f%%, want at most %.0f%%", 100*fpRate, 100*maxFalsePosRate)
		}
	}
	t.Log("\n" + tables.String())
	if *corpusTable != "" {
		if err := os.WriteFile(*corpusTable, []byte(tables.String()), 0o644); err != nil {
			t.Fatalf("write -corpus.table: %v", err)
		}
	}
}

// corpusReport formats the per-category markdown table and returns the
// overall recall and false-positive rate.
func corpusReport(dangerous, benign map[string]*categoryScore) (table string, recall, fpRate float64) {
	var b strings.Builder
	sum := func(m map[string]*categoryScore) (total, hits int) {
		for _, s := range m {
			total += s.total
			hits += s.hits
		}
		return total, hits
	}
	rows := func(m map[string]*categoryScore) {
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			s := m[k]
			fmt.Fprintf(&b, "| %s | %d | %d | %.1f%% |\n", k, s.total, s.hits, 100*float64(s.hits)/float64(s.total))
		}
	}
	b.WriteString("| dangerous category | commands | caught | recall |\n|---|---:|---:|---:|\n")
	rows(dangerous)
	dt, dh := sum(dangerous)
	recall = float64(dh) / float64(dt)
	fmt.Fprintf(&b, "| **all dangerous** | %d | %d | %.1f%% |\n\n", dt, dh, 100*recall)
	b.WriteString("| benign category | commands | flagged | false positives |\n|---|---:|---:|---:|\n")
	rows(benign)
	bt, bh := sum(benign)
	fpRate = float64(bh) / float64(bt)
	fmt.Fprintf(&b, "| **all benign** | %d | %d | %.1f%% |\n", bt, bh, 100*fpRate)
	return b.String(), recall, fpRate
}
