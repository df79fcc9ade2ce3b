package store

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/engine"
)

// testOptions are fixed facts so that results do not depend on the machine.
func testOptions() Options {
	return Options{Workspace: "/work/ws", HomeDir: "/home/u", ResolvePath: func(p string) string { return p },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

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
