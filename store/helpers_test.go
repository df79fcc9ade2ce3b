package store

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/engine/builtin"
	"github.com/toolgate/toolgate/policy"
)

// testOptions are fixed facts so that results do not depend on the machine.
func testOptions() Options {
	o := Options{Workspace: "/work/ws", HomeDir: "/home/u", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return withEngine(o)
}

// withEngine sets o.Compile to compile with the engine, as package inforce
// does for the server (store tests cannot import inforce: it imports store).
func withEngine(o Options) Options {
	// Paths resolve as written, so that results do not depend on the machine.
	eo := engine.Options{Workspace: o.Workspace, HomeDir: o.HomeDir, ResolvePath: func(p string) string { return p }}
	if o.PackageRules == nil {
		o.PackageRules = builtin.Default
	}
	o.Compile = func(section *policy.Section, builtin *policy.Builtin) (any, []policy.Problem) {
		return engine.CompileSection(section, builtin, eo)
	}
	return o
}

// inForce is the engine of the policy in force in s.
func inForce(s *Store) *engine.Engine { return s.Compiled().(*engine.Engine) }

// openFixture copies a testdata file to a temp dir as config.yaml and opens it.
func openFixture(t *testing.T, fixture string) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	if fixture != "" {
		raw, err := os.ReadFile(filepath.Join("testdata", fixture))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, ConfigFile), raw)
	}
	s, err := Open(dir, testOptions())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func writeFile(t *testing.T, path string, raw []byte) {
	t.Helper()
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// testDirTools are the tools /add-dir's overrides name, as the service passes them.
var testDirTools = DirTools{Path: engine.PathTools, Shell: engine.ShellTools}
