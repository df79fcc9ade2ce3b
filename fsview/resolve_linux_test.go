package fsview

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
		want    lookupState
	}{
		{"an existing dir", "/real/sub", lookupExists},
		{"a missing file", "/real/sub/new.txt", lookupMissing},
		{"a missing dir", "/real/nope/new.txt", lookupMissing},
		{"through a symlink", "/link/sub", lookupUnknown},
		{"a symlink itself", "/link", lookupUnknown},
		{"missing below a symlink", "/link/nope/x", lookupUnknown},
	}
	for _, c := range cases {
		if got := noSymlinkLookup(filepath.ToSlash(base + c.p)); got != c.want {
			t.Errorf("%s: got %v, want %v", c.note, got, c.want)
		}
	}
	if openat2Broken.Load() {
		t.Error("openat2 was found unusable on this kernel; path checks fall back to one lstat per component")
	}
}
