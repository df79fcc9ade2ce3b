package fsview

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolvePathAgreesWithKernel: for random paths through a tree of
// directories and symlinks (to /, up, sideways, in chains, dangling),
// with . and .. anywhere, whatever the kernel opens (os.Stat follows every
// link and applies each .. where it stands) is the file ResolvePath names,
// and a PathResolver says the same. The property is the kernel's own
// answer, not a second implementation of the walk.
func TestResolvePathAgreesWithKernel(t *testing.T) {
	dir := t.TempDir()
	base, _ := filepath.EvalSymlinks(dir)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(base, "a/b/c"), 0o755))
	must(os.MkdirAll(filepath.Join(base, "d"), 0o755))
	must(os.WriteFile(filepath.Join(base, "a/b/f"), nil, 0o644))
	links := map[string]string{
		"a/root": "/", "a/up": "..", "a/b/up2": "../..", "d/side": "../a/b", "d/abs": filepath.Join(base, "a"),
		"a/b/c/chain": "../../../d/side", "d/dangle": filepath.Join(base, "nowhere/x"), "a/b/flink": "f",
	}
	for name, target := range links {
		must(os.Symlink(target, filepath.Join(base, name)))
	}
	parts := []string{"a", "b", "c", "d", "f", "root", "up", "up2", "side", "abs", "chain", "dangle", "flink", "..", ".", "missing", "etc", "tmp"}
	rng := rand.New(rand.NewPCG(15, 5))
	r := NewPathResolver()
	checked := 0
	for range 4000 {
		p := filepath.ToSlash(base)
		for range 1 + rng.IntN(7) {
			p += "/" + nextPart(p, filepath.ToSlash(base), parts, rng)
		}
		got := ResolvePath(p)
		if again := r.Resolve(p); again != got {
			t.Errorf("%s: PathResolver %q, ResolvePath %q", p, again, got)
		}
		want, err := os.Stat(p)
		if err != nil {
			continue // the kernel opens nothing; nothing to compare
		}
		checked++
		if got == "" {
			t.Errorf("%s: ResolvePath says unknown, the kernel opens it", p)
			continue
		}
		fi, err := os.Stat(got)
		if err != nil || !os.SameFile(fi, want) {
			t.Errorf("%s: ResolvePath %q is not the file the kernel opens (%v)", p, got, err)
		}
	}
	if checked < 500 {
		t.Errorf("only %d of the random paths exist; the tree should make more reachable", checked)
	}
	t.Logf("%d random paths, %d of them opened by the kernel and compared", 4000, checked)
}

// nextPart picks the next component of a random path: mostly an entry of
// the directory the path so far opens, when that lies in the test tree (so
// that many paths exist), else .., . or a name from parts.
func nextPart(p, base string, parts []string, rng *rand.Rand) string {
	switch n := rng.IntN(10); {
	case n < 2:
		return ".."
	case n < 3:
		return "."
	case n < 4:
		return parts[rng.IntN(len(parts))]
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil || !strings.HasPrefix(filepath.ToSlash(real)+"/", base+"/") {
		return parts[rng.IntN(len(parts))]
	}
	entries, err := os.ReadDir(real)
	if err != nil || len(entries) == 0 {
		return ".."
	}
	return entries[rng.IntN(len(entries))].Name()
}
