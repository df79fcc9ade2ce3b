package docs

import (
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// modulePath is the import path prefix of the project's own packages.
const modulePath = "github.com/toolgate/toolgate/"

// architectureRanks reads the README's Architecture table: every package
// named in a row's first column gets the row's index. Imports may only point
// to the same row or a later one.
func architectureRanks(t *testing.T) map[string]int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	start := strings.Index(text, "\n## Architecture\n")
	if start < 0 {
		t.Fatal("README.md has no \"## Architecture\" section")
	}
	section := text[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	name := regexp.MustCompile("`([a-z/]+)/`")
	ranks := map[string]int{}
	row := 0
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.Contains(cells[1], "`") {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			ranks[m[1]] = row
		}
		row++
	}
	if len(ranks) < 10 {
		t.Fatalf("Architecture table names %d packages, want the whole layout: %v", len(ranks), ranks)
	}
	return ranks
}

// rankOf finds the row of a package dir: its own, else its nearest parent's
// (engine/builtin is engine's).
func rankOf(ranks map[string]int, dir string) (int, bool) {
	for d := dir; d != "." && d != ""; d = filepath.Dir(d) {
		if r, ok := ranks[d]; ok {
			return r, true
		}
	}
	return 0, false
}

// TestArchitectureImportsPointDown holds the README's Architecture table and
// the code together: no package imports one listed above it, and every
// package of the server is in the table.
func TestArchitectureImportsPointDown(t *testing.T) {
	ranks := architectureRanks(t)
	// Outside the server's layers: clients over HTTP, tools and tests.
	outside := []string{"cmd/toolgate", "cmd/loadgen", "cmd/memstart", "cmd/internal", "internal", "integration", "docs", "clients"}
	checked := 0
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		if rel != "." && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if rel != "." && isOtherModule(path) {
			return filepath.SkipDir // its own module, not a layer of the server
		}
		for _, o := range outside {
			if rel == o || strings.HasPrefix(rel, o+"/") {
				return filepath.SkipDir
			}
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil || rel == "." {
			return nil // no Go files here, or the root package (openapi.yaml's embed)
		}
		checked++
		own, ok := rankOf(ranks, rel)
		if !ok {
			t.Errorf("package %s is not in README's Architecture table", rel)
			return nil
		}
		for _, imp := range pkg.Imports {
			dep, found := strings.CutPrefix(imp, modulePath)
			if !found {
				continue
			}
			if r, ok := rankOf(ranks, dep); ok && r < own {
				t.Errorf("%s imports %s, which the Architecture table lists above it", rel, dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < len(ranks) {
		t.Errorf("checked %d packages, want at least the %d the table names", checked, len(ranks))
	}
}

// TestStorageDoesNotImportTheEngine: no file under store/ but its tests
// imports the engine. Storage keeps documents and records and takes what
// the engine makes of them as plain values: package inforce compiles the
// policy in force and gives the store its compile and its default rules.
func TestStorageDoesNotImportTheEngine(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(filepath.Join("..", "store"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		rel, _ := filepath.Rel("..", path)
		rel = filepath.ToSlash(rel)
		for _, imp := range f.Imports {
			dep, _ := strings.CutPrefix(strings.Trim(imp.Path.Value, `"`), modulePath)
			if dep == "engine" || strings.HasPrefix(dep, "engine/") {
				t.Errorf("%s imports %s: storage takes the engine's results as plain values", rel, dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 30 {
		t.Errorf("checked %d files under store/, want them all", checked)
	}
}
