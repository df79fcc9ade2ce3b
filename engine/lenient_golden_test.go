package engine_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

var updateLenient = flag.Bool("update-lenient", false, "rewrite testdata/lenient-problems.golden from the current compiler")

// lenientGolden holds, for every mutated policy of lenientCases, a hash of
// the problems Compile reports (in order). It was written by the compiler
// of the fast start after checking that its ordered problems and decisions for
// these policies equal those of the map-walking compiler before it
// (78773a0), so a change to what is a problem, its path, message or order
// shows here.
const lenientGolden = "testdata/lenient-problems.golden"

// lenientJunk are the values every position of the base policy is set to.
var lenientJunk = []any{nil, 5, 4.2, "x", "ALLOW", " ask ", "", true, false, []any{}, []any{1}, []any{"bash"},
	[]any{"bash", "read_file"}, map[string]any{}, map[string]any{"a": 1}, map[string]any{"*": "deny"},
	map[string]any{"*": "bogus", "patterns": map[string]any{"rm *": "deny", "[": "ask", "x": 3}}, "re:(", "/etc",
	map[string]any{"/tmp": "allow", "c:": "deny", "*": "ask"}}

const lenientBase = `{
 "enabled": true, "schema": "tiered_policy", "permission_mode": "strict",
 "tools": {"bash": "ask", "read_file": {"*": "allow"}, "web_fetch": "deny"},
 "defaults": {"*": "ask"},
 "rules": [
  {"id": "r1", "tools": ["bash"], "pattern": "rm *", "action": "deny", "severity": "HIGH", "match_type": "command"},
  {"id": "r2", "tools": "read_file", "pattern": "/etc/*", "severity": "LOW"},
  {"id": "r1", "tools": ["bash"], "pattern": "ls *", "severity": "CRITICAL"}],
 "approval_overrides": [
  {"id": "o1", "tools": ["bash"], "pattern": "git status", "action": "allow", "source": "user_approval"},
  {"id": "cli_trusted_shell_x", "tools": ["bash"], "pattern": "re:.*/tmp/x.*", "action": "allow", "source": "cli_add_dir"}],
 "external_directory": {"*": "ask", "/tmp": "allow"},
 "owner_scopes": {"feishu": {"ou_1": {"tools": {"bash": {"patterns": {"git *": "allow", "[": "ask"}, "*": "deny"},
   "read_file": "allow"}, "defaults": {"*": "deny"}}}},
 "deny_guidance_message": " no "}`

func jsonClone(t testing.TB, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// lenientCases is the base policy, nil, {}, the base with every position
// (in sorted key order) set to each junk value, a new key beside each
// mapping's keys, and each of those again without schema (legacy).
func lenientCases(t testing.TB) []map[string]any {
	var base map[string]any
	if err := json.Unmarshal([]byte(lenientBase), &base); err != nil {
		t.Fatal(err)
	}
	set := func(path []any, v any) map[string]any {
		root := jsonClone(t, base).(map[string]any)
		var cur any = root
		for i, p := range path {
			last := i == len(path)-1
			switch c := cur.(type) {
			case map[string]any:
				if last {
					c[p.(string)] = v
				} else {
					cur = c[p.(string)]
				}
			case []any:
				if last {
					c[p.(int)] = v
				} else {
					cur = c[p.(int)]
				}
			}
		}
		return root
	}
	out := []map[string]any{base, nil, {}}
	var walk func(path []any, cur any)
	walk = func(path []any, cur any) {
		if len(path) > 0 {
			for _, j := range lenientJunk {
				out = append(out, set(path, j))
			}
		}
		switch c := cur.(type) {
		case map[string]any:
			keys := make([]string, 0, len(c))
			for k := range c {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(append(slices.Clone(path), k), c[k])
			}
			for _, j := range lenientJunk {
				out = append(out, set(append(slices.Clone(path), "zz_new"), j))
			}
		case []any:
			for i := range c {
				walk(append(slices.Clone(path), i), c[i])
			}
		}
	}
	walk(nil, base)
	for _, c := range slices.Clone(out) {
		if c == nil {
			continue
		}
		legacy := jsonClone(t, c).(map[string]any)
		delete(legacy, "schema")
		out = append(out, legacy)
	}
	return out
}

var lenientBuiltin = []any{
	map[string]any{"id": "b1", "tools": []any{"bash"}, "pattern": "rm -rf *", "severity": "CRITICAL"},
	"junk",
	map[string]any{"id": "b2", "tools": []any{"web_fetch"}, "pattern": "x", "action": "nope"},
}

func problemsHash(ps []policy.Problem) string {
	h := sha256.New()
	for _, p := range ps {
		fmt.Fprintf(h, "%s\t%s\n", p.Path, p.Message)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// TestLenientDecodingGolden: the problems of 3,000 broken policies (paths,
// messages, order) stay as they are (docs/configuration.md#validation; the typed decoder moved decoding
// into package policy without changing them). Run with -update-lenient
// after a deliberate change, and say why in the commit.
func TestLenientDecodingGolden(t *testing.T) {
	cases := lenientCases(t)
	got := make([]string, len(cases))
	for i, c := range cases {
		_, ps := engine.Compile(c, lenientBuiltin, engine.Options{Workspace: "/w", HomeDir: "/home/u"})
		got[i] = fmt.Sprintf("%d %s %d", i, problemsHash(ps), len(ps))
	}
	checkLenientGolden(t, lenientGolden, got, func(i int, got, want string) {
		_, ps := engine.Compile(cases[i], lenientBuiltin, engine.Options{Workspace: "/w", HomeDir: "/home/u"})
		t.Errorf("case %d: got %s, want %s; policy %v; problems %v", i, got, want, cases[i], ps)
	})
}

// checkLenientGolden compares got, one line per case, with the golden file
// at path (or rewrites the file under -update-lenient). For each of the
// first five cases that differ it calls report, which must fail the test
// for that case; it then fails with the count of changed cases.
func checkLenientGolden(t *testing.T, path string, got []string, report func(i int, got, want string)) {
	t.Helper()
	if *updateLenient {
		if err := os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		want = append(want, sc.Text())
	}
	if len(want) != len(got) {
		t.Fatalf("got %d cases, the golden file has %d", len(got), len(want))
	}
	bad := 0
	for i := range got {
		if got[i] != want[i] {
			if bad++; bad <= 5 {
				report(i, got[i], want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d cases changed", bad, len(got))
	}
}
