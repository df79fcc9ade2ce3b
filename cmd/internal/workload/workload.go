// Package workload is the mix of calls the performance figures are taken
// with, shared by the load generator (cmd/loadgen) and the in-process HTTP
// benchmarks (cmd/server), so that both measure the same calls on the same
// workspace.
package workload

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// kinds are the calls of each kind; j numbers the call, so that path calls
// name different files (see PathFile).
var kinds = map[string]func(j int) map[string]any{
	"benign": func(int) map[string]any {
		return bash("npm run build --silent")
	},
	"match": func(int) map[string]any {
		return bash("git push --force origin main")
	},
	"path": func(j int) map[string]any {
		return map[string]any{"tool_name": "read_file", "tool_args": map[string]any{"path": PathFile(j)}}
	},
	"long": func(int) map[string]any {
		return bash(strings.Repeat("npm run build ", 70))
	},
}

func bash(command string) map[string]any {
	return map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": command}}
}

// Kinds are the names Call knows, sorted.
func Kinds() []string {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Call is call j of a kind as an evaluate request body; false for a kind
// Call does not know.
func Call(kind string, j int) (map[string]any, bool) {
	f, ok := kinds[kind]
	if !ok {
		return nil, false
	}
	return f(j), true
}

// Files is how many workspace files path calls name.
const Files = 1000

// PathFile is the workspace-relative file of path call j:
// src/pkg<k%50>/file<k>.go for k = j mod Files.
func PathFile(j int) string {
	k := j % Files
	return fmt.Sprintf("src/pkg%d/file%d.go", k%50, k)
}

// Populate creates the files path calls name under dir (the server's
// workspace), so that resolving them walks real directories.
func Populate(dir string) error {
	for k := 0; k < Files; k++ {
		name := filepath.Join(dir, filepath.FromSlash(PathFile(k)))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			return err
		}
	}
	return nil
}
