package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

const importConfig = `# JiuwenSwarm config: header about the file
model: gpt-x

# The policy: this comment belongs to permissions
permissions:
  enabled: true # inline comment kept
  tools:
    # bash needs a person
    bash: ask
  rules:
    - id: r1
      tool: bash
      pattern: 'rm *'
      action: deny

# channels config below
channels:
  - web
`

const importSection = `# The policy: this comment belongs to permissions
permissions:
  enabled: true # inline comment kept
  tools:
    # bash needs a person
    bash: ask
  rules:
    - id: r1
      tool: bash
      pattern: 'rm *'
      action: deny
`

// TestImportExportRoundTrip: the section and its comments arrive as
// written, the rest of the file stays out, builtin_rules.yaml comes along,
// a second Import changes nothing and Export returns the stored text.
func TestImportExportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	builtin := "# my builtins\n- {id: b1, tool: bash, pattern: 'curl *', action: ask, severity: MEDIUM}\n"
	writeFile(t, dir, store.ConfigFile, importConfig)
	writeFile(t, dir, store.BuiltinFile, builtin)
	p := openPolicy(t, dbtest.Open(t, pgtest.NewDSN(t)))
	ctx := context.Background()
	if _, err := p.Export(ctx); !errors.Is(err, store.ErrNoDocument) {
		t.Errorf("Export of an empty database: err = %v, want store.ErrNoDocument", err)
	}
	imported, err := p.Import(ctx, dir)
	if err != nil || !imported {
		t.Fatalf("Import = %v, %v; want true", imported, err)
	}
	doc, err := p.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(doc.Config); got != importSection {
		t.Errorf("stored section:\n%s\nwant:\n%s", got, importSection)
	}
	if got := string(doc.Builtin); got != builtin {
		t.Errorf("stored builtin = %q, want %q", got, builtin)
	}
	writeFile(t, dir, store.ConfigFile, "permissions: {enabled: false}\n")
	if imported, err := p.Import(ctx, dir); err != nil || imported {
		t.Errorf("second Import = %v, %v; want false, nil", imported, err)
	}
	out, err := p.Export(ctx)
	if err != nil || string(out) != importSection {
		t.Errorf("Export = %q, %v; want the imported section", out, err)
	}
	// The export is itself a config.yaml whose import gives the same text.
	again, err := store.SectionText(out)
	if err != nil || string(again) != importSection {
		t.Errorf("store.SectionText(export) = %q, %v; want it unchanged", again, err)
	}
}

// TestImportWithoutConfig: an empty config dir imports the default
// policy's section (its comments included) and no builtin text.
func TestImportWithoutConfig(t *testing.T) {
	p := openPolicy(t, dbtest.Open(t, pgtest.NewDSN(t)))
	if imported, err := p.Import(context.Background(), t.TempDir()); err != nil || !imported {
		t.Fatalf("Import = %v, %v", imported, err)
	}
	doc, err := p.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := store.SectionText([]byte(store.DefaultConfig))
	if string(doc.Config) != string(want) || !strings.Contains(string(doc.Config), "# Master switch") {
		t.Errorf("stored %q, want the default section with its comments", doc.Config)
	}
	if doc.Builtin != nil || doc.Version != "1" {
		t.Errorf("builtin %q version %s, want none and 1", doc.Builtin, doc.Version)
	}
}

// TestImportOnceAcrossReplicas: replicas starting together import once.
func TestImportOnceAcrossReplicas(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	dir := t.TempDir()
	writeFile(t, dir, store.ConfigFile, importConfig)
	const replicas = 4
	var wg sync.WaitGroup
	results := make([]bool, replicas)
	for i := range replicas {
		p := openPolicy(t, dbtest.Open(t, dsn))
		wg.Go(func() {
			ok, err := p.Import(context.Background(), dir)
			if err != nil {
				t.Errorf("Import: %v", err)
			}
			results[i] = ok
		})
	}
	wg.Wait()
	n := 0
	for _, ok := range results {
		if ok {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d replicas imported, want 1", n)
	}
}

// TestImportRefusesBrokenConfig: a config.yaml that does not parse is an
// error and nothing is stored.
func TestImportRefusesBrokenConfig(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, store.ConfigFile, "permissions: [\n")
	p := openPolicy(t, dbtest.Open(t, pgtest.NewDSN(t)))
	if _, err := p.Import(context.Background(), dir); err == nil {
		t.Fatal("Import of a broken file: no error")
	}
	if doc, _ := p.Read(context.Background()); doc.Config != nil {
		t.Errorf("stored %q after a refused import", doc.Config)
	}
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSectionText covers the layouts the cut has to handle.
func TestSectionText(t *testing.T) {
	for _, tc := range []struct {
		note, in, want string
	}{
		{"empty file", "", "{}\n"},
		{"no permissions key", "model: x\n", "{}\n"},
		{"last key, no newline at the end", "a: 1\npermissions:\n  enabled: true", "permissions:\n  enabled: true\n"},
		{"first key, trailing comment goes with the next key", "permissions:\n  enabled: true\n# about b\nb: 2\n", "permissions:\n  enabled: true\n"},
		{"indented comment at the end stays", "permissions:\n  enabled: true\n  # last word\nb: 2\n", "permissions:\n  enabled: true\n  # last word\n"},
		{"flow style file is re-encoded", "{a: 1, permissions: {enabled: true}}\n", "permissions: {enabled: true}\n"},
		{"alias to an outside anchor is resolved", "base: &b {enabled: true}\npermissions: *b\n", "permissions:\n  enabled: true\n"},
	} {
		got, err := store.SectionText([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.note, got, err, tc.want)
		}
	}
	for _, bad := range []string{"- a\n", "permissions: [\n"} {
		if _, err := store.SectionText([]byte(bad)); err == nil {
			t.Errorf("store.SectionText(%q): no error", bad)
		}
	}
}

// TestSetBuiltin: the built-in list text is replaced (and removed with
// nil), the version moves, the section stays.
func TestSetBuiltin(t *testing.T) {
	p := openPolicy(t, dbtest.Open(t, pgtest.NewDSN(t)))
	ctx := context.Background()
	if _, err := p.Import(ctx, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	before, _ := p.Read(ctx)
	text := []byte("[]\n")
	doc, err := p.SetBuiltin(ctx, text)
	if err != nil || string(doc.Builtin) != "[]\n" || doc.Version != "2" || string(doc.Config) != string(before.Config) {
		t.Errorf("SetBuiltin = %q v%s, %v; want [] at version 2 with the section unchanged", doc.Builtin, doc.Version, err)
	}
	doc, err = p.SetBuiltin(ctx, nil)
	if err != nil || doc.Builtin != nil || doc.Version != "3" {
		t.Errorf("SetBuiltin(nil) = %q v%s, %v; want none at version 3", doc.Builtin, doc.Version, err)
	}
}
