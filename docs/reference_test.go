package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// flagNameArg maps the flag package's definers to the position of the
// flag's name among their arguments.
var flagNameArg = map[string]int{
	"String": 0, "Bool": 0, "Int": 0, "Int64": 0, "Uint": 0, "Uint64": 0, "Float64": 0, "Duration": 0,
	"StringVar": 1, "BoolVar": 1, "IntVar": 1, "Int64Var": 1, "UintVar": 1, "Uint64Var": 1,
	"Float64Var": 1, "DurationVar": 1, "TextVar": 1, "Var": 1, "Func": 0, "BoolFunc": 0,
}

var flagName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// envName matches the names of toolgate's own environment variables.
var envName = regexp.MustCompile(`^(TOOLGATE|JIUWENSWARM)_[A-Z0-9_]+$`)

// goFiles lists the non-test Go files under dir, recursively.
func goFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err) // a directory gone (moved, renamed) would otherwise go unchecked
	}
	return files
}

// definedFlags returns the names of the flags the Go files under dir define.
func definedFlags(t *testing.T, dir string) []string {
	t.Helper()
	set := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range goFiles(t, dir) {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			i, ok := flagNameArg[sel.Sel.Name]
			if !ok || len(call.Args) <= i {
				return true
			}
			lit, ok := call.Args[i].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			name, err := strconv.Unquote(lit.Value)
			if err == nil && flagName.MatchString(name) {
				set[name] = true
			}
			return true
		})
	}
	return sortedSet(set)
}

// usedEnv returns toolgate's environment variable names that appear as
// string literals in the Go files under dir.
func usedEnv(t *testing.T, dir string) []string {
	t.Helper()
	set := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range goFiles(t, dir) {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && envName.MatchString(s) {
					set[s] = true
				}
			}
			return true
		})
	}
	return sortedSet(set)
}

func sortedSet(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestEveryFlagDocumented checks that each flag the server and the toolgate
// command define, and each environment variable toolgate reads, appears in
// configuration.md.
func TestEveryFlagDocumented(t *testing.T) {
	ref, err := os.ReadFile("configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(ref)
	server := definedFlags(t, "../cmd/server")
	if len(server) < 10 {
		t.Fatalf("found only %d server flags (%v): the scan is broken", len(server), server)
	}
	for _, dir := range []string{"../cmd/server", "../cmd/toolgate"} {
		for _, name := range definedFlags(t, dir) {
			if !strings.Contains(page, "`--"+name+"`") {
				t.Errorf("flag --%s of %s is not in configuration.md", name, dir)
			}
		}
	}
	var env []string
	for _, dir := range []string{"../cmd", "../store", "../api", "../web", "../approval", "../engine"} {
		env = append(env, usedEnv(t, dir)...)
	}
	if len(env) == 0 {
		t.Fatal("found no environment variables: the scan is broken")
	}
	for _, name := range env {
		if !strings.Contains(page, "`"+name+"`") {
			t.Errorf("environment variable %s is not in configuration.md", name)
		}
	}
}
