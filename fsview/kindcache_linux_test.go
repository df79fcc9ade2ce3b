package fsview

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
)

// waitOld waits until changes made now are older than the cache's margin,
// so that the next lookup keeps its answer.
func waitOld() { time.Sleep(stampMargin + 20*time.Millisecond) }

// cachedKinds is how many answers k keeps.
func cachedKinds(k *KindCache) int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return len(k.m)
}

// TestKindCacheSeesChangesAtOnce: an answer the cache keeps is never given
// once the name changed, however fast the change follows (the same clock
// tick: rename over, replace the directory itself), and a new call sees
// the new kind at once.
func TestKindCacheSeesChangesAtOnce(t *testing.T) {
	cases := []struct {
		note   string
		name   string // looked up in ws
		setup  func(t *testing.T, ws, out string)
		change func(t *testing.T, ws, out string)
		before engine.FileKind
		after  engine.FileKind
	}{
		{note: "nothing there, then a link made", name: "evil",
			change: func(t *testing.T, ws, out string) { must(t, os.Symlink(out, filepath.Join(ws, "evil"))) },
			before: engine.NoFile, after: engine.Symlink},
		{note: "a plain file renamed over by a link", name: "evil",
			setup: func(t *testing.T, ws, out string) { must(t, os.WriteFile(filepath.Join(ws, "evil"), nil, 0o644)) },
			change: func(t *testing.T, ws, out string) {
				must(t, os.Symlink(out, filepath.Join(ws, ".tmp")))
				must(t, os.Rename(filepath.Join(ws, ".tmp"), filepath.Join(ws, "evil")))
			},
			before: engine.PlainFile, after: engine.Symlink},
		{note: "a link made ahead of time, renamed over the file (one change)", name: "evil",
			setup: func(t *testing.T, ws, out string) {
				must(t, os.WriteFile(filepath.Join(ws, "evil"), nil, 0o644))
				must(t, os.Symlink(out, filepath.Join(ws, ".tmp")))
			},
			change: func(t *testing.T, ws, out string) {
				must(t, os.Rename(filepath.Join(ws, ".tmp"), filepath.Join(ws, "evil")))
			},
			before: engine.PlainFile, after: engine.Symlink},
		{note: "a folder replaced by a link", name: "evil",
			setup: func(t *testing.T, ws, out string) { must(t, os.Mkdir(filepath.Join(ws, "evil"), 0o755)) },
			change: func(t *testing.T, ws, out string) {
				must(t, os.Remove(filepath.Join(ws, "evil")))
				must(t, os.Symlink(out, filepath.Join(ws, "evil")))
			},
			before: engine.Folder, after: engine.Symlink},
		{note: "the directory itself replaced by one holding a link", name: "evil",
			setup: func(t *testing.T, ws, out string) {
				must(t, os.WriteFile(filepath.Join(ws, "evil"), nil, 0o644))
				next := ws + ".next"
				must(t, os.Mkdir(next, 0o755))
				must(t, os.Symlink(out, filepath.Join(next, "evil")))
			},
			change: func(t *testing.T, ws, out string) {
				must(t, os.Rename(ws, ws+".old"))
				must(t, os.Rename(ws+".next", ws))
			},
			before: engine.PlainFile, after: engine.Symlink},
		{note: "the directory's path is a link swapped to another directory", name: "evil",
			setup: func(t *testing.T, ws, out string) {
				// ws/inner is looked up through ws/cur, a link
				must(t, os.MkdirAll(filepath.Join(ws, "a"), 0o755))
				must(t, os.MkdirAll(filepath.Join(ws, "b"), 0o755))
				must(t, os.WriteFile(filepath.Join(ws, "a", "evil"), nil, 0o644))
				must(t, os.Symlink(out, filepath.Join(ws, "b", "evil")))
				must(t, os.Symlink("a", filepath.Join(ws, "cur")))
				must(t, os.Symlink("b", filepath.Join(ws, ".tmp")))
			},
			change: func(t *testing.T, ws, out string) {
				must(t, os.Rename(filepath.Join(ws, ".tmp"), filepath.Join(ws, "cur")))
			},
			before: engine.PlainFile, after: engine.Symlink},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			root, _ := filepath.EvalSymlinks(t.TempDir())
			ws, out := filepath.Join(root, "ws"), filepath.Join(root, "out")
			must(t, os.Mkdir(ws, 0o755))
			must(t, os.Mkdir(out, 0o755))
			if c.setup != nil {
				c.setup(t, ws, out)
			}
			p := filepath.Join(ws, c.name)
			if c.note == "the directory's path is a link swapped to another directory" {
				p = filepath.Join(ws, "cur", c.name)
			}
			waitOld()
			k := NewKindCache(64)
			for i := 0; i < 2; i++ { // the second answer comes from the cache
				if got := k.Call()(p); got != c.before {
					t.Fatalf("before (look %d): got %v, want %v", i, got, c.before)
				}
			}
			if cachedKinds(k) == 0 {
				t.Fatal("the answer before was not kept: this test would not test the cache")
			}
			c.change(t, ws, out)
			if got := k.Call()(p); got != c.after {
				t.Errorf("after: got %v, want %v at once", got, c.after)
			}
			if got := lstatKind(p); got != c.after {
				t.Errorf("the uncached lookup after: got %v, want %v", got, c.after)
			}
			// Once the change is old, answers come from the cache again:
			// under the new stamp, never the one kept before.
			waitOld()
			for i := 0; i < 2; i++ {
				if got := k.Call()(p); got != c.after {
					t.Errorf("after, once old (look %d): got %v, want %v", i, got, c.after)
				}
			}
		})
	}
}

// TestKindCacheYoungStampNotKept: an answer under a directory stamp newer
// than the margin is not kept, so a second change in the same clock tick
// cannot hide behind it.
func TestKindCacheYoungStampNotKept(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	must(t, os.WriteFile(filepath.Join(root, "f"), nil, 0o644))
	k := NewKindCache(64)
	if got := k.Call()(filepath.Join(root, "f")); got != engine.PlainFile {
		t.Fatalf("got %v", got)
	}
	if n := cachedKinds(k); n != 0 {
		t.Errorf("kept %d answers under a stamp made just now, want none", n)
	}
}

// TestKindCacheBounded: the cache never holds more than its bound.
func TestKindCacheBounded(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	waitOld()
	k := NewKindCache(8)
	look := k.Call()
	for i := 0; i < 50; i++ {
		look(filepath.Join(root, "w"+string(rune('a'+i%26))+string(rune('a'+i/26))))
		if n := cachedKinds(k); n > 8 {
			t.Fatalf("holds %d answers, bound 8", n)
		}
	}
	if cachedKinds(k) == 0 {
		t.Error("kept nothing")
	}
}

// TestKindCacheAgreesWithLstat: over random changes of a few names in two
// directories (files, folders, links, renames over, removals, a directory
// swapped for another), the cached answer of a new call is the uncached
// lstat's, every time; the clock sometimes moves past the margin so that
// answers are kept.
func TestKindCacheAgreesWithLstat(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	dirs := []string{filepath.Join(root, "d1"), filepath.Join(root, "d2")}
	for _, d := range dirs {
		must(t, os.Mkdir(d, 0o755))
	}
	names := []string{"a", "b", "c"}
	rng := rand.New(rand.NewPCG(7, 29))
	k := NewKindCache(32)
	kept := 0
	for step := 0; step < 300; step++ {
		d := dirs[rng.IntN(len(dirs))]
		p := filepath.Join(d, names[rng.IntN(len(names))])
		switch rng.IntN(7) {
		case 0:
			_ = os.RemoveAll(p)
		case 1:
			_ = os.RemoveAll(p)
			_ = os.WriteFile(p, nil, 0o644)
		case 2:
			_ = os.RemoveAll(p)
			_ = os.Mkdir(p, 0o755)
		case 3:
			_ = os.RemoveAll(p)
			_ = os.Symlink("/", p)
		case 4: // rename a fresh link over whatever is there
			tmp := filepath.Join(d, ".tmp")
			_ = os.RemoveAll(tmp)
			_ = os.Symlink("/etc", tmp)
			_ = os.Rename(tmp, p)
		case 5: // swap the two directories
			_ = os.Rename(dirs[0], root+"/swap")
			_ = os.Rename(dirs[1], dirs[0])
			_ = os.Rename(root+"/swap", dirs[1])
		case 6:
			if rng.IntN(4) == 0 {
				waitOld()
			}
		}
		for _, d := range dirs {
			look := k.Call()
			for _, n := range names {
				p := filepath.Join(d, n)
				if got, want := look(p), lstatKind(p); got != want {
					t.Fatalf("step %d, %s: cached %v, lstat %v", step, p, got, want)
				}
			}
		}
		kept = max(kept, cachedKinds(k))
	}
	if kept == 0 {
		t.Error("no answer was ever kept: the property did not test the cache")
	}
}

// BenchmarkKindOf: the uncached lstat per word against the cache (one stat
// of the directory per call, then map lookups), for a call of two words.
func BenchmarkKindOf(b *testing.B) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	waitOld()
	words := []string{filepath.Join(root, "run"), filepath.Join(root, "build")}
	b.Run("lstat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, w := range words {
				KindOf(w)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		k := NewKindCache(4096)
		b.ReportAllocs()
		for b.Loop() {
			look := k.Call()
			for _, w := range words {
				look(w)
			}
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
