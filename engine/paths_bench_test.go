package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/store"
)

// BenchmarkPaths measures the external-directory check of path and shell
// calls with the server's resolver (store.ResolvePath) on a real
// workspace: the common case of paths inside the workspace, nested
// arguments, a workdir and bare words. Run:
//
//	go test ./engine/ -run '^$' -bench BenchmarkPaths -benchmem
func BenchmarkPaths(b *testing.B) {
	perms, rules := defaultPolicy(b, 0)
	ws := b.TempDir()
	for _, d := range []string{"src", "docs"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for _, f := range []string{"src/main.go", "src/util.go", "docs/a.md"} {
		if err := os.WriteFile(filepath.Join(ws, f), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	e, _ := engine.Compile(perms, rules, engine.Options{Workspace: ws, HomeDir: "/home/u", ResolvePath: store.ResolvePath})
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"read_rel", "read_file", map[string]any{"path": "src/main.go"}},
		{"read_abs", "read_file", map[string]any{"file_path": ws + "/src/main.go"}},
		{"read_dotdot", "read_file", map[string]any{"path": "src/../docs/a.md"}},
		{"edit_nested", "edit_file", map[string]any{"edits": []any{map[string]any{"file_path": "src/main.go", "old": "a", "new": "b"}}}},
		{"read_external", "read_file", map[string]any{"path": "/etc/hosts"}},
		{"bash_cat_paths", "bash", map[string]any{"command": "cat src/main.go src/util.go"}},
		{"bash_bare_words", "bash", map[string]any{"command": "ls -la src docs"}},
		{"bash_workdir", "bash", map[string]any{"command": "cat main.go", "workdir": ws + "/src"}},
		{"bash_compound", "bash", map[string]any{"command": "cd src && cat main.go | grep func > ../out.txt"}},
	} {
		req := &engine.Request{ToolName: c.tool, ToolArgs: c.args, ChannelID: "web"}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = e.Evaluate(req)
			}
		})
	}
}
