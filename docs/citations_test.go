package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// citation matches a reference to a numbered section of a document that is
// not in the repository (the word contract, spec or issue and a number,
// such as a D-rule or a section). A comment
// states the rule itself or links a docs/ anchor, which a reader can open.
var citation = regexp.MustCompile(`(?i)\b(contract|spec|issue)\s+(§\s*)?(D[0-9]|[0-9])` +
	// A section number in parentheses later in the same sentence.
	`|(?i)\b(contract|spec)('s)?\b[^.()]*\(\s*(§\s*)?[0-9]+(\.[0-9]+)*\s*\)`)

// TestCommentsCiteNoOutsideDocuments reads every Go, templ and YAML source
// file of the repository, nested modules included (generated templ output
// aside), and fails on each line that cites the contract, the spec or an
// issue by number.
func TestCommentsCiteNoOutsideDocuments(t *testing.T) {
	root := ".."
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// A module of its own under the repository (bench/peers) is
			// still the project's source: its comments are checked too.
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !citable(path) {
			return nil
		}
		found = append(found, citationsIn(t, path)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("cites a document outside the repository: %s", f)
	}
}

// citable says whether a file is source whose comments are checked.
func citable(path string) bool {
	if strings.HasSuffix(path, "_templ.go") {
		return false
	}
	switch filepath.Ext(path) {
	case ".go", ".templ", ".yaml", ".yml", ".sh":
		return true
	}
	return false
}

// isOtherModule says whether a directory holds a go.mod of its own, like the
// benchmark harness kept apart from the service's dependencies (bench/peers).
func isOtherModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

// citationsIn lists "path:line: text" for each citing line of one file.
func citationsIn(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	prev := ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		// A citation wrapped over two comment lines ("contract" at the end
		// of one, "3" at the start of the next) is read as one text.
		text := strings.TrimLeft(strings.TrimSpace(line), "/#* \t")
		if citation.MatchString(line) || citation.MatchString(lastWord(prev)+" "+text) {
			out = append(out, path+":"+strconv.Itoa(n)+": "+strings.TrimSpace(line))
		}
		prev = line
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// lastWord is the last space-separated word of line.
func lastWord(line string) string {
	f := strings.Fields(line)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}
