package fsview

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/engine"
)

// TestResolvePathKernelOrder: .. is applied after the symlinks before it
// are followed, as open(2) does, and a .. that follows a part that cannot
// be looked at is unknown (""). ResolvePath and a PathResolver agree.
func TestResolvePathKernelOrder(t *testing.T) {
	dir := t.TempDir()
	base, _ := filepath.EvalSymlinks(dir)
	out := t.TempDir()
	outBase, _ := filepath.EvalSymlinks(out)
	ws := filepath.Join(base, "ws")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(ws, "sub/deep"), 0o755))
	must(os.Symlink("/", filepath.Join(ws, "root")))
	must(os.Symlink(outBase, filepath.Join(ws, "sub/out")))
	must(os.Symlink("../../..", filepath.Join(ws, "sub/deep/up")))
	must(os.Symlink("loop2", filepath.Join(ws, "loop1")))
	must(os.Symlink("loop1", filepath.Join(ws, "loop2")))
	must(os.Symlink(filepath.Join(outBase, "new"), filepath.Join(ws, "dangling")))
	cases := []struct{ note, in, want string }{
		{"a link to / then ../..", ws + "/root/../..", "/"},
		{"a link to / then ../etc", ws + "/root/../etc/passwd", "/etc/passwd"},
		{"a link out, then .. leaves from its target", ws + "/sub/out/../x", filepath.Dir(outBase) + "/x"},
		{"a relative link with .. in its target", ws + "/sub/deep/up/x", base + "/x"},
		{"plain .. with no link is lexical", ws + "/sub/deep/../../sub/f", ws + "/sub/f"},
		{"a missing part taken back by ..", ws + "/nope/../root/../etc", "/etc"},
		{"a missing tail is appended", ws + "/sub/new/dir/f", ws + "/sub/new/dir/f"},
		{"a missing tail below a link", ws + "/sub/out/new/f", outBase + "/new/f"},
		{"a dangling link leads to its target", ws + "/dangling", outBase + "/new"},
		{"a link loop with no .. after it is lexical", ws + "/loop1/x", ws + "/loop1/x"},
		{".. after a link loop is unknown", ws + "/loop1/../x", ""},
		{"no .. and no links", ws + "/sub/deep", ws + "/sub/deep"},
		{". and // are dropped", ws + "/./sub//deep/.", ws + "/sub/deep"},
		{".. above the root stays at the root", "/../../etc", "/etc"},
	}
	r := NewPathResolver()
	for _, c := range cases {
		in, want := filepath.ToSlash(c.in), filepath.ToSlash(c.want)
		if got := ResolvePath(in); got != want {
			t.Errorf("%s: ResolvePath(%q) = %q, want %q", c.note, in, got, want)
		}
		if got := r.Resolve(in); got != want {
			t.Errorf("%s: PathResolver.Resolve(%q) = %q, want %q", c.note, in, got, want)
		}
	}
}

// TestKindOf: one lstat tells a link (dangling or not, to a folder or not)
// from a folder, a plain file and nothing.
func TestKindOf(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
	must(os.Symlink("/", filepath.Join(dir, "link")))
	must(os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling")))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	for _, c := range []struct {
		note, name string
		want       engine.FileKind
	}{
		{"a file", "file", engine.PlainFile},
		{"a link to a folder", "link", engine.Symlink},
		{"a dangling link", "dangling", engine.Symlink},
		{"missing", "missing", engine.NoFile},
		{"a folder", "sub", engine.Folder},
		{"the dir itself", "", engine.Folder},
		{"below a plain file", "file/x", engine.NoFile},
	} {
		if got := KindOf(filepath.ToSlash(filepath.Join(dir, c.name))); got != c.want {
			t.Errorf("%s: got %v, want %v", c.note, got, c.want)
		}
	}
}
