package engine_test

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/fsview"
)

// BenchmarkPaths measures the external-directory check of path and shell
// calls on a real workspace: the common case of paths inside the
// workspace, nested arguments, a workdir and bare words. fs uses the
// server's resolver (fsview.ResolvePath and KindOf: system calls), mem a
// resolver that
// answers at once (the engine's own cost); lookups/op counts the resolver
// calls, which is what a busy machine's timings hide. Run:
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
	var lookups atomic.Int64
	counted := func(resolve func(string) string) func(string) string {
		return func(p string) string { lookups.Add(1); return resolve(p) }
	}
	engines := []struct {
		name string
		e    *engine.Engine
	}{}
	for _, r := range []struct {
		name    string
		resolve func(string) string
		kindOf  func(string) engine.FileKind
	}{{"fs", fsview.ResolvePath, fsview.KindOf}, {"mem", func(p string) string { return p }, nil}} {
		opts := engine.Options{Workspace: ws, HomeDir: "/home/u", ResolvePath: counted(r.resolve)}
		if r.kindOf != nil {
			opts.KindOf = func(p string) engine.FileKind { lookups.Add(1); return r.kindOf(p) }
		}
		e, _ := engine.Compile(perms, rules, opts)
		engines = append(engines, struct {
			name string
			e    *engine.Engine
		}{r.name, e})
	}
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
		req := &engine.Request{Call: engine.NewCall(c.tool, c.args), ChannelID: "web"}
		for _, en := range engines {
			b.Run(c.name+"/"+en.name, func(b *testing.B) {
				b.ReportAllocs()
				lookups.Store(0)
				for i := 0; i < b.N; i++ {
					_ = en.e.Evaluate(req)
				}
				b.ReportMetric(float64(lookups.Load())/float64(b.N), "lookups/op")
			})
		}
	}
}
