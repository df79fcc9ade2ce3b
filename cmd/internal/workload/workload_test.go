package workload

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPopulateMakesEveryPathFile: every file a path call can name exists
// after Populate, and path calls name Files different files.
func TestPopulateMakesEveryPathFile(t *testing.T) {
	dir := t.TempDir()
	if err := Populate(dir); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for j := 0; j < 2*Files; j++ {
		call, ok := Call("path", j)
		if !ok {
			t.Fatal("no path kind")
		}
		p := call["tool_args"].(map[string]any)["path"].(string)
		seen[p] = true
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Fatalf("call %d names %s, which Populate did not make: %v", j, p, err)
		}
	}
	if len(seen) != Files {
		t.Errorf("path calls name %d files, want %d", len(seen), Files)
	}
	if _, ok := Call("nope", 0); ok {
		t.Error("an unknown kind: got ok")
	}
}
