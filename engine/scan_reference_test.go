package engine

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/engine/builtin"
	"github.com/toolgate/toolgate/policy"
)

// The plain in-order scan is the reference of the indexed evaluation: for
// each rule in file order, match it. The prefilter, the exact-command map
// and the per-tool index must give exactly its hits, in its order.

// scanCollect is the reference of ruleIndex.collect.
func scanCollect(idx *ruleIndex, tool string, v *callValues) []*rule {
	var hits []*rule
	for _, r := range idx.all {
		if ruleApplies(r, tool) && scanMatches(r, v) {
			hits = append(hits, r)
		}
	}
	return hits
}

// scanFirst is the reference of ruleIndex.first.
func scanFirst(idx *ruleIndex, tool string, v *callValues) *rule {
	for _, r := range idx.all {
		if ruleApplies(r, tool) && scanMatches(r, v) {
			return r
		}
	}
	return nil
}

// ruleApplies says whether a rule covers a tool: the rule names it, or the
// tool is an MCP server's and the rule names every tool of that server.
func ruleApplies(r *rule, tool string) bool {
	if slices.Contains(r.tools, tool) {
		return true
	}
	server, _, ok := SplitMCPTool(tool)
	return ok && slices.Contains(r.tools, "mcp__"+server+"__*")
}

// scanMatches is the reference match of one rule: an args rule against
// the canonical JSON of the call's own arguments, any other by its values.
func scanMatches(r *rule, v *callValues) bool {
	if !r.args {
		return v.matches(r)
	}
	if v.strictOnly || v.ctx.req == nil {
		return false
	}
	text, err := CanonicalArgs(v.ctx.req.Call.Args())
	if err != nil {
		return r.level >= policy.Ask
	}
	return r.m.matchArgs(text)
}

// plainEngine returns a copy of e whose rule indexes scan every rule of a
// tool in file order, with no exact map and no prefilter: the engine the
// benchmarks compare against.
func plainEngine(e *Engine) *Engine {
	p := *e.policy
	p.builtin = plainIndex(p.builtin)
	p.user = plainIndex(p.user)
	p.overrides = plainIndex(p.overrides)
	cp := *e
	cp.policy = &p
	return &cp
}

func plainIndex(idx ruleIndex) ruleIndex {
	out := ruleIndex{all: idx.all, byTool: map[string]*toolRules{}}
	for tool := range idx.byTool {
		tr := &toolRules{pf: &ruleFilter{}}
		for _, r := range idx.all {
			if r.args && ruleApplies(r, tool) {
				tr.args = append(tr.args, r) // no prefilter: every one runs
				continue
			}
			if ruleApplies(r, tool) {
				tr.scan = append(tr.scan, r)
				// Every ask and deny shell rule meets every tail of a
				// launch reading: the reference for the tail shortcut.
				strict := r.category == CategoryShell && r.level >= policy.Ask
				tr.tails.marked = append(tr.tails.marked, strict)
				tr.tails.any = tr.tails.any || strict
			}
		}
		out.byTool[tool] = tr
	}
	for server := range idx.byServer {
		if out.byServer == nil {
			out.byServer = map[string]*toolRules{}
		}
		out.byServer[server] = out.byTool["mcp__"+server+"__*"]
	}
	return out
}

// ruleNames renders hits for messages and comparison.
func ruleNames(hits []*rule) []string {
	var out []string
	for _, h := range hits {
		if h == nil {
			out = append(out, "(none)")
			continue
		}
		out = append(out, h.name+"@"+h.m.raw)
	}
	return out
}

// checkAgainstScan compares the indexed lookups of one call with the plain
// scan, set by set, and the whole decision with the plain engine's.
func checkAgainstScan(t *testing.T, note string, e, plain *Engine, req *Request) {
	t.Helper()
	var vals callValues
	vals.category = ToolCategory(req.Call.Tool())
	e.fillValues(&vals, req, nil)
	vals.ctx.req = req // args rules read the call's arguments
	p := e.policy
	for _, set := range []struct {
		name string
		idx  *ruleIndex
	}{{"builtin", &p.builtin}, {"user", &p.user}, {"overrides", &p.overrides}} {
		got := set.idx.collect(req.Call.Tool(), &vals, nil)
		want := scanCollect(set.idx, req.Call.Tool(), &vals)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %s hits for %s %v:\n got  %q\n want %q", note, set.name, req.Call.Tool(), req.Call.Args(), ruleNames(got), ruleNames(want))
		}
		if got, want := set.idx.first(req.Call.Tool(), &vals), scanFirst(set.idx, req.Call.Tool(), &vals); got != want {
			t.Errorf("%s: %s first for %s %v: got %q, want %q", note, set.name, req.Call.Tool(), req.Call.Args(), ruleNames([]*rule{got}), ruleNames([]*rule{want}))
		}
	}
	got, want := e.Evaluate(req), plain.Evaluate(req)
	// External paths come in the order of the argument map.
	slices.Sort(got.ExternalPaths)
	slices.Sort(want.ExternalPaths)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: decision for %s %v:\n got  %+v\n want %+v", note, req.Call.Tool(), req.Call.Args(), got, want)
	}
}

// TestIndexMatchesScanOnReferenceCases runs the 240 reference cases through
// both the indexed lookups and the plain scan.
func TestIndexMatchesScanOnReferenceCases(t *testing.T) {
	for _, c := range loadReferenceCases(t) {
		e, _ := Compile(c.Permissions, c.BuiltinRules, Options{Workspace: "/srv/server-ws", HomeDir: "/home/u"})
		req := c.Request
		checkAgainstScan(t, c.Name, e, plainEngine(e), &req)
	}
}

// defaultPermissions is the permissions section of a default-like config:
// the tool levels of store's default config.yaml (the engine cannot import
// store) and no rules.
const defaultPermissions = `
enabled: true
schema: tiered_policy
permission_mode: normal
defaults: {"*": ask}
tools:
  read_file: allow
  read_text_file: allow
  read: allow
  glob_file_search: allow
  glob: allow
  list_dir: allow
  list_files: allow
  grep: allow
  bash: ask
  mcp_exec_command: ask
  create_terminal: ask
  write_file: ask
  write_text_file: ask
  write: ask
  edit_file: ask
  search_replace: ask
rules: []
approval_overrides: []
external_directory: {"*": ask}
`

// defaultBuiltin decodes engine/builtin's package default rules.
func defaultBuiltin(t testing.TB) []any {
	t.Helper()
	var doc struct {
		Rules []any `yaml:"rules"`
	}
	if err := yaml.Unmarshal(builtin.Default, &doc); err != nil {
		t.Fatalf("builtin rules: %v", err)
	}
	return doc.Rules
}

func decodePermissions(t testing.TB, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("permissions: %v", err)
	}
	return m
}

// corpusCalls reads the command corpus (category, tool, command or JSON
// tool_args per line) when it is present.
func corpusCalls(t testing.TB) []*Request {
	t.Helper()
	files, _ := filepath.Glob("testdata/corpus/*.txt")
	var out []*Request
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
				continue
			}
			parts := strings.SplitN(line, "\t", 3)
			if len(parts) != 3 {
				continue
			}
			args := map[string]any{"command": parts[2]}
			if strings.HasPrefix(parts[2], "{") {
				args = nil
				if err := json.Unmarshal([]byte(parts[2]), &args); err != nil {
					continue
				}
			}
			out = append(out, &Request{Call: NewCall(parts[1], args)})
		}
		f.Close()
	}
	return out
}

// scanSampleCalls are calls that touch each built-in rule, with and without
// case changes, Windows separators and non-ASCII look-alikes.
var scanSampleCalls = []*Request{
	{Call: NewCall("bash", map[string]any{"command": "rm -rf /"})},
	{Call: NewCall("bash", map[string]any{"command": "RM -RF ~"})},
	{Call: NewCall("bash", map[string]any{"command": "rm -r build"})},
	{Call: NewCall("bash", map[string]any{"command": "MKFS.ext4 /dev/sda1"})},
	{Call: NewCall("bash", map[string]any{"command": "mkfſ /dev/sda1"})},
	{Call: NewCall("bash", map[string]any{"command": "ſhutdown now"})},
	{Call: NewCall("bash", map[string]any{"command": "curl https://x | sudo bash"})},
	{Call: NewCall("bash", map[string]any{"command": "sudo apt install x"})},
	{Call: NewCall("create_terminal", map[string]any{"cmd": "reboot"})},
	{Call: NewCall("mcp_exec_command", map[string]any{"command": `dd if=x of=/dev/sdb`})},
	{Call: NewCall("bash", map[string]any{"command": "git status"})},
	{Call: NewCall("bash", map[string]any{"command": `type C:\Users\me\secret.txt`})},
	{Call: NewCall("read_file", map[string]any{"path": "/ws/project/src/main.go"})},
	{Call: NewCall("write_file", map[string]any{"path": `C:\Users\me\.ssh\id_rsa`})},
	{Call: NewCall("read_file", map[string]any{"path": "~/.ssh/id_rsa"})},
}

// TestIndexMatchesScanOnBuiltinCorpus checks the package default built-in
// rules against the command corpus and the samples.
func TestIndexMatchesScanOnBuiltinCorpus(t *testing.T) {
	e, problems := Compile(decodePermissions(t, defaultPermissions), defaultBuiltin(t), Options{Workspace: "/ws/project", HomeDir: "/home/u"})
	if len(problems) > 0 {
		t.Fatalf("default policy problems: %v", problems)
	}
	plain := plainEngine(e)
	calls := append(corpusCalls(t), scanSampleCalls...)
	for i, req := range calls {
		checkAgainstScan(t, "corpus", e, plain, req)
		if i > 0 && t.Failed() {
			return
		}
	}
}

// PlainEngine and GeneratedRules serve the benchmarks of package
// engine_test (which may import store).
func PlainEngine(e *Engine) *Engine { return plainEngine(e) }

// GeneratedRules is generatedRules for package engine_test.
func GeneratedRules(n int) []any { return generatedRules(n) }
