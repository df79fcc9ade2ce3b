package engine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestExternalDirectory covers the external-directory merge (docs/decisions.md#paths-outside-the-workspace,
// docs/decisions.md, D2, D5): keys, .. escapes, Windows separators, workdir.
func TestExternalDirectory(t *testing.T) {
	e, problems := compileYAML(t, `schema: tiered_policy
defaults: {"*": allow}
external_directory:
  "*": ask
  /data/shared: allow
  /data/shared/secret: deny
  C:/Users/me: allow
  "C:": allow
  /tmp/: allow`, "")
	if !hasProblem(problems, `permissions.external_directory["C:"]`) {
		t.Errorf("short key: want a problem, got %v", problems)
	}
	runDecisionCases(t, e, []decisionCase{
		{"inside the workspace", pathCall("read_file", "/ws/project/src/a.go"), policy.Allow, "tiered_policy:defaults.*"},
		{"relative inside", pathCall("read_file", "src/a.go"), policy.Allow, "tiered_policy:defaults.*"},
		{"outside asks", pathCall("read_file", "/etc/hosts"), policy.Ask, "tiered_policy:defaults.*|external_directory.*"},
		{".. escapes the workspace", pathCall("read_file", "../other/x"), policy.Ask, "tiered_policy:defaults.*|external_directory.*"},
		{".. inside an absolute path", pathCall("read_file", "/ws/project/../other/x"), policy.Ask, "tiered_policy:defaults.*|external_directory.*"},
		{"a sibling with a common prefix is outside", pathCall("read_file", "/ws/project2/x"), policy.Ask, "tiered_policy:defaults.*|external_directory.*"},
		{"trusted prefix", pathCall("read_file", "/data/shared/r.csv"), policy.Allow, "tiered_policy:defaults.*"},
		{"a key with a trailing / is normalized", pathCall("read_file", "/tmp/x"), policy.Allow, "tiered_policy:defaults.*"},
		{"a deny key under a trusted prefix", pathCall("read_file", "/data/shared/secret/k"), policy.Deny, "tiered_policy:defaults.*|external_directory[/data/shared/secret]"},
		{"Windows separators", pathCall("read_file", `C:\Users\me\notes.txt`), policy.Allow, "tiered_policy:defaults.*"},
		{"drive letters compare case-insensitively", pathCall("read_file", `c:\Users\me\notes.txt`), policy.Allow, "tiered_policy:defaults.*"},
		{"a short key is ignored (D5: drive paths are external)", pathCall("read_file", `D:\x`), policy.Ask, "tiered_policy:defaults.*|external_directory.*"},
		{"home expands in path values (D2)", pathCall("write_file", "~/.bashrc"), policy.Ask, "tiered_policy:defaults.*|external_directory.*"},
		{"shell: every simple command (D2)", shellCall("bash", "echo hi && cat /etc/passwd"), policy.Ask, "tiered_policy:defaults.*|external_directory.*"},
		{"shell: ~ expands", shellCall("bash", "cat ~/.ssh/id_rsa"), policy.Ask, "tiered_policy:defaults.*|external_directory.*"},
		{"shell: URLs are not paths", shellCall("bash", "curl https://example.com/a/b"), policy.Allow, "tiered_policy:defaults.*"},
		{"shell: relative refs stay inside", shellCall("bash", "git checkout origin/main"), policy.Allow, "tiered_policy:defaults.*"},
	})
	wd := shellCall("bash", "cat ./a.txt")
	wd.Call.Args()["workdir"] = "/etc"
	// The working directory is a path itself (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm), listed first.
	if got := e.Evaluate(wd); got.Level != policy.Ask || !reflect.DeepEqual(got.ExternalPaths, []string{"/etc", "/etc/a.txt"}) {
		t.Errorf("workdir: got %s %v, want ask [/etc /etc/a.txt]", got.Level, got.ExternalPaths)
	}
	reqWS := pathCall("read_file", "/srv/x")
	reqWS.Workspace = "/srv"
	if got := e.Evaluate(reqWS); got.Level != policy.Allow {
		t.Errorf("request workspace: got %s, want allow", got.Level)
	}
}

// TestExternalDirectoryForms: absent means ask; a plain level applies to all.
func TestExternalDirectoryForms(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want policy.Level
	}{{"", policy.Ask}, {"external_directory: deny", policy.Deny}, {"external_directory: allow", policy.Allow}, {"external_directory: {}", policy.Ask}} {
		e, _ := compileYAML(t, "schema: tiered_policy\ndefaults: {\"*\": allow}\n"+c.yaml, "")
		if got := e.Evaluate(pathCall("read_file", "/etc/hosts")); got.Level != c.want {
			t.Errorf("%q: got %s, want %s", c.yaml, got.Level, c.want)
		}
	}
}

// TestExternalSymlinks: a symlink that leads out of the workspace is
// external once resolved.
func TestExternalSymlinks(t *testing.T) {
	opts := testOpts
	opts.ResolvePath = func(p string) string {
		if p == "/ws/project/link/passwd" {
			return "/etc/passwd"
		}
		return p
	}
	e, _ := Compile(map[string]any{"schema": "tiered_policy", "defaults": map[string]any{"*": "allow"}}, nil, opts)
	if got := e.Evaluate(pathCall("read_file", "link/passwd")); got.Level != policy.Ask {
		t.Errorf("symlink escape: got %s %v, want ask", got.Level, got.ExternalPaths)
	}
}

// TestExternalManyPathWords: past MaxPathWords a call counts as external
// at the "*" level, so a path hidden behind a thousand others still asks.
func TestExternalManyPathWords(t *testing.T) {
	e, _ := compileYAML(t, "schema: tiered_policy\ndefaults: {\"*\": allow}\nexternal_directory: {\"*\": ask}", "")
	var b strings.Builder
	b.WriteString("cat")
	for i := 0; i < MaxPathWords+5; i++ {
		fmt.Fprintf(&b, " src/f%d.go", i)
	}
	b.WriteString(" /etc/passwd")
	got := e.Evaluate(shellCall("bash", b.String()))
	if got.Level != policy.Ask || got.MatchedRule != "tiered_policy:defaults.*|external_directory.*" {
		t.Errorf("hidden path: got %s %q, want ask with the external suffix", got.Level, got.MatchedRule)
	}
	allInside := strings.Repeat(" ./src/a.go", 20)
	if got := e.Evaluate(shellCall("bash", "cat"+allInside)); got.Level != policy.Allow {
		t.Errorf("a few paths inside: got %s, want allow", got.Level)
	}
}

// TestExternalPathsListedOnce: external paths are listed once each, in
// order, with few paths (the scan) and with many (the set past 16).
func TestExternalPathsListedOnce(t *testing.T) {
	e, _ := compileYAML(t, "schema: tiered_policy\ndefaults: {\"*\": allow}\nexternal_directory: {\"*\": ask}", "")
	for _, n := range []int{3, 40} {
		var b strings.Builder
		b.WriteString("cat")
		var want []string
		for i := 0; i < n; i++ {
			want = append(want, fmt.Sprintf("/srv/f%d", i))
		}
		for range 2 {
			for _, p := range want {
				fmt.Fprintf(&b, " %s", p)
			}
		}
		got := e.Evaluate(shellCall("bash", b.String())).ExternalPaths
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%d paths, each twice: got %d external paths %v, want each once in order", n, len(got), got)
		}
	}
}
