package workload

import (
	"encoding/json"
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
		p := call.ToolArgs.Path
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

// TestBodiesAreTheMapBodies: each kind's body is the bytes the map it
// replaced encoded to, so figures taken before and after compare.
func TestBodiesAreTheMapBodies(t *testing.T) {
	for _, tc := range []struct {
		note, kind string
		want       string
	}{
		{note: "a command", kind: "match", want: `{"tool_args":{"command":"git push --force origin main"},"tool_name":"bash"}`},
		{note: "a path", kind: "path", want: `{"tool_args":{"path":"src/pkg7/file7.go"},"tool_name":"read_file"}`},
	} {
		call, _ := Call(tc.kind, 7)
		got, err := json.Marshal(call)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %s (%v), want %s", tc.note, got, err, tc.want)
		}
	}
	got, _ := json.Marshal(Batch{Calls: []Request{bash("ls")}})
	if want := `{"calls":[{"tool_args":{"command":"ls"},"tool_name":"bash"}]}`; string(got) != want {
		t.Errorf("batch: got %s, want %s", got, want)
	}
}
