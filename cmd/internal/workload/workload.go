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

// Request is an evaluate request body of the workload. Its fields are in
// the order encoding/json wrote the map it replaces (keys sorted), so the
// bodies sent are the same bytes as before.
type Request struct {
	ToolArgs Args   `json:"tool_args"`
	ToolName string `json:"tool_name"`
}

// Args are the arguments the workload's calls carry: a command for bash,
// a path for read_file.
type Args struct {
	Command string `json:"command,omitempty"`
	Path    string `json:"path,omitempty"`
}

// Batch is an evaluate/batch request body.
type Batch struct {
	Calls []Request `json:"calls"`
}

// kinds are the calls of each kind; j numbers the call, so that path calls
// name different files (see PathFile).
var kinds = map[string]func(j int) Request{
	"benign": func(int) Request {
		return bash("npm run build --silent")
	},
	"match": func(int) Request {
		return bash("git push --force origin main")
	},
	"path": func(j int) Request {
		return Request{ToolName: "read_file", ToolArgs: Args{Path: PathFile(j)}}
	},
	"long": func(int) Request {
		return bash(strings.Repeat("npm run build ", 70))
	},
}

func bash(command string) Request {
	return Request{ToolName: "bash", ToolArgs: Args{Command: command}}
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
func Call(kind string, j int) (Request, bool) {
	f, ok := kinds[kind]
	if !ok {
		return Request{}, false
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
