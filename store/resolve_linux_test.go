package store

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNoSymlinkLookup: openat2 settles paths without symlinks in one call
// and leaves every path through a symlink to the walk.
func TestNoSymlinkLookup(t *testing.T) {
	dir := t.TempDir()
	base, _ := filepath.EvalSymlinks(dir)
	if err := os.MkdirAll(filepath.Join(base, "real/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "real"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		note, p string
		known   bool
	}{
		{"an existing dir", "/real/sub", true},
		{"a missing file", "/real/sub/new.txt", true},
		{"a missing dir", "/real/nope/new.txt", true},
		{"through a symlink", "/link/sub", false},
		{"a symlink itself", "/link", false},
		{"missing below a symlink", "/link/nope/x", false},
	}
	for _, c := range cases {
		if got := noSymlinkLookup(filepath.ToSlash(base + c.p)); got != c.known {
			t.Errorf("%s: got %v, want %v", c.note, got, c.known)
		}
	}
	if openat2Broken.Load() {
		t.Error("openat2 was found unusable on this kernel; path checks fall back to one lstat per component")
	}
}
