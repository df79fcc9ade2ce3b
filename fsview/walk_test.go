package fsview

import (
	"os"
	"path"
	"path/filepath"
	"testing"
)

func TestResolvePath(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "made-by-write"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	base, _ := filepath.EvalSymlinks(dir)
	outBase, _ := filepath.EvalSymlinks(outside)
	cases := []struct{ note, in, want string }{
		{"a dangling link leads to its target", dir + "/dangling", outBase + "/made-by-write"},
		{"an existing link", dir + "/link", base + "/real"},
		{"a missing file under a link", dir + "/link/new/file.txt", base + "/real/new/file.txt"},
		{"nothing exists below the root", "/no/such/path", "/no/such/path"},
	}
	// One PathResolver serves every case twice: what it remembers from one
	// path must not change the answer for another.
	r := NewPathResolver()
	for round := 0; round < 2; round++ {
		for _, c := range cases {
			if got := ResolvePath(filepath.ToSlash(c.in)); got != filepath.ToSlash(c.want) {
				t.Errorf("%s: got %q, want %q", c.note, got, c.want)
			}
			if got := r.Resolve(filepath.ToSlash(c.in)); got != filepath.ToSlash(c.want) {
				t.Errorf("%s (PathResolver, round %d): got %q, want %q", c.note, round, got, c.want)
			}
		}
	}
}

// TestPathResolverRemembers: a PathResolver answers from what it saw, so a
// link made after its first look is not seen by it (the batch is one
// snapshot), while ResolvePath sees it at once.
func TestPathResolverRemembers(t *testing.T) {
	dir := t.TempDir()
	base, _ := filepath.EvalSymlinks(dir)
	r := NewPathResolver()
	in := filepath.ToSlash(base + "/later/file")
	if got, want := r.Resolve(in), in; got != want {
		t.Fatalf("before the link: got %q, want %q", got, want)
	}
	elsewhere := t.TempDir()
	outBase, _ := filepath.EvalSymlinks(elsewhere)
	if err := os.Symlink(elsewhere, filepath.Join(dir, "later")); err != nil {
		t.Fatal(err)
	}
	if got, want := r.Resolve(in), in; got != want {
		t.Errorf("PathResolver after the link: got %q, want %q (its snapshot)", got, want)
	}
	if got, want := ResolvePath(in), filepath.ToSlash(outBase+"/file"); got != want {
		t.Errorf("ResolvePath after the link: got %q, want %q", got, want)
	}
	if got, want := NewPathResolver().Resolve(in), filepath.ToSlash(outBase+"/file"); got != want {
		t.Errorf("a new PathResolver after the link: got %q, want %q", got, want)
	}
}

// TestResolvePathAgreesWithWalk: the one-call openat2 answer, the lstat walk
// and a PathResolver resolve every path of a tree with symlinks at each
// level (to dirs, to files, dangling, relative, chains, a file used as a
// dir) to the same place.
func TestResolvePathAgreesWithWalk(t *testing.T) {
	dir := t.TempDir()
	base, _ := filepath.EvalSymlinks(dir)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(base, "a/b/c"), 0o755))
	must(os.WriteFile(filepath.Join(base, "a/b/file"), nil, 0o644))
	must(os.Symlink(filepath.Join(base, "a/b"), filepath.Join(base, "abs-dir")))
	must(os.Symlink("b/c", filepath.Join(base, "a/rel-dir")))
	must(os.Symlink("file", filepath.Join(base, "a/b/file-link")))
	must(os.Symlink(filepath.Join(base, "nowhere/x"), filepath.Join(base, "a/dangling")))
	must(os.Symlink("rel-dir", filepath.Join(base, "a/chain")))
	var paths []string
	for _, p := range []string{"", "a", "a/b", "a/b/c", "a/b/file", "a/b/file/under", "abs-dir", "a/rel-dir", "a/b/file-link",
		"a/dangling", "a/chain", "missing", "a/missing/deeper"} {
		for _, tail := range []string{"", "/x", "/x/y.txt"} {
			paths = append(paths, path.Clean(filepath.ToSlash(base)+"/"+p+tail))
		}
	}
	r := NewPathResolver()
	for _, p := range paths {
		walk := NewPathResolver().Resolve(p)
		if got := ResolvePath(p); got != walk {
			t.Errorf("ResolvePath(%q) = %q, the walk gives %q", p, got, walk)
		}
		if got := r.Resolve(p); got != walk {
			t.Errorf("PathResolver.Resolve(%q) = %q, the walk gives %q", p, got, walk)
		}
	}
	if got, want := ResolvePath(filepath.ToSlash(base)+"/a/chain/x"), filepath.ToSlash(base)+"/a/b/c/x"; got != want {
		t.Errorf("chain: got %q, want %q", got, want)
	}
}
