package engine

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/engine/builtin"
)

var corpusTable = flag.String("corpus.table", "", "write the built-in rules' recall and false-positive table (markdown) to this file")

// Thresholds of the built-in rules' quality on the labelled corpus.
const (
	minRecall       = 0.95
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

// byBuiltin reports whether a built-in rule made the decision ask or deny.
func byBuiltin(d Decision) bool {
	return d.Level != Allow && strings.Contains(d.MatchedRule, "tiered_policy:builtin:")
}

// categoryScore counts one category's cases and built-in hits.
type categoryScore struct{ total, hits int }

// TestBuiltinRulesCorpus measures the default built-in rules on the labelled
// corpus: recall on dangerous.txt (caught = ask or deny by a built-in rule)
// and the false-positive rate on benign.txt, per category.
func TestBuiltinRulesCorpus(t *testing.T) {
	e := builtinOnlyEngine(t)
	score := func(name string) (map[string]*categoryScore, []string) {
		scores := map[string]*categoryScore{}
		var hits []string
		for _, c := range readCorpus(t, name) {
			d := e.Evaluate(&Request{ToolName: c.tool, ToolArgs: c.args, ChannelID: "web", Workspace: "/ws/project"})
			s := scores[c.category]
			if s == nil {
				s = &categoryScore{}
				scores[c.category] = s
			}
			s.total++
			if byBuiltin(d) {
				s.hits++
				hits = append(hits, fmt.Sprintf("%s:%d %s %s -> %s %s", name, c.line, c.tool, c.text, d.Level, d.MatchedRule))
			} else if name == "dangerous.txt" {
				t.Logf("missed %s:%d [%s] %s %s -> %s %s", name, c.line, c.category, c.tool, c.text, d.Level, d.MatchedRule)
			}
		}
		return scores, hits
	}
	dangerous, _ := score("dangerous.txt")
	benign, falsePos := score("benign.txt")
	for _, fp := range falsePos {
		t.Logf("false positive %s", fp)
	}
	table, recall, fpRate := corpusReport(dangerous, benign)
	t.Log("\n" + table)
	if *corpusTable != "" {
		if err := os.WriteFile(*corpusTable, []byte(table), 0o644); err != nil {
			t.Fatalf("write -corpus.table: %v", err)
		}
	}
	if recall < minRecall {
		t.Errorf("recall = %.1f%%, want at least %.0f%%", 100*recall, 100*minRecall)
	}
	if fpRate > maxFalsePosRate {
		t.Errorf("false-positive rate = %.1f%%, want at most %.0f%%", 100*fpRate, 100*maxFalsePosRate)
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
