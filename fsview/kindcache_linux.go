package fsview

import (
	"errors"
	"path"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/toolgate/toolgate/engine"
)

// KindCache remembers what a bare word names in a directory (KindOf's
// answer), keyed by the directory's identity and change stamp, so that a
// call pays one stat of its directory instead of one lstat per word. Why a
// remembered answer is never stale is in
// docs/decisions.md#bare-word-lookups-are-cached-by-the-directorys-change-stamp:
// a name's kind only changes by a change to its directory, which moves
// the directory's ctime; an answer is kept only when that stamp is older
// than the lookup by more than a clock tick, on a local filesystem, and it
// was read through the same open directory as the stamp. It is safe for
// concurrent use.
type KindCache struct {
	mu  sync.RWMutex
	m   map[kindKey]engine.FileKind
	max int
	// now is the clock the stamps are compared with (tests move it).
	now func() time.Time
}

// kindKey is a directory's identity and change stamp, and a name in it.
type kindKey struct {
	dev, ino           uint64
	mtime, ctime, size int64
	nlink              uint64
	name               string
}

// stampMargin is how much older than the lookup a directory's change stamp
// must be for an answer under it to be kept. The kernel stamps changes
// from a coarse clock that lags the real one by at most one tick (1-10
// ms); a change made after the lookup began therefore gets a stamp newer
// than the lookup time minus a tick, so it cannot share the stamp of an
// answer kept under this rule.
const stampMargin = 100 * time.Millisecond

// NewKindCache returns a KindCache of at most max names; when it is full
// it starts again empty.
func NewKindCache(max int) *KindCache {
	return &KindCache{m: make(map[kindKey]engine.FileKind), max: max, now: time.Now}
}

// defaultKinds is the cache CallKindOf uses.
var defaultKinds = NewKindCache(4096)

// CallKindOf is the engine's Options.CallKindOf for a real filesystem: a
// KindOf for one call (or one batch) through the process's KindCache.
func CallKindOf() func(string) engine.FileKind { return defaultKinds.Call() }

// Call returns a KindOf for one call: it stats each directory once for
// the call's lifetime and answers names in it from the cache while the
// directory's stamp is the one it read. It is not safe for concurrent use.
func (k *KindCache) Call() func(string) engine.FileKind {
	c := &kindCall{cache: k}
	return c.kind
}

// kindCall is one call's view: the last directory it stat'ed.
type kindCall struct {
	cache *KindCache
	dir   string
	key   kindKey
	// usable: key is the directory's stamp and old enough to answer from.
	usable bool
	looked bool
}

// kind answers as KindOf does.
func (c *kindCall) kind(p string) engine.FileKind {
	dir, name, ok := splitDirName(p)
	if !ok {
		return lstatKind(p)
	}
	if !c.looked || dir != c.dir {
		c.dir, c.looked = dir, true
		c.key, c.usable = c.cache.stampOf(dir)
	}
	if !c.usable {
		// A directory changed within the margin (or one that cannot be
		// stat'ed) keeps no answer: the plain lstat is one system call
		// where looking through the directory is five.
		return lstatKind(p)
	}
	key := c.key
	key.name = name
	c.cache.mu.RLock()
	kind, hit := c.cache.m[key]
	c.cache.mu.RUnlock()
	if hit {
		return kind
	}
	return c.cache.lookAndKeep(dir, name, p)
}

// splitDirName splits a clean absolute path into its directory and last
// name; ok is false for anything else (the root, a path with . or ..
// parts, empty names), which then takes the uncached lstat.
func splitDirName(p string) (dir, name string, ok bool) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 || i == len(p)-1 || !strings.HasPrefix(p, "/") || path.Clean(p) != p {
		return "", "", false
	}
	dir, name = p[:i], p[i+1:]
	if dir == "" {
		dir = "/"
	}
	return dir, name, name != "." && name != ".."
}

// stampOf stats dir (following links, as a lookup under it does) and
// returns its key; usable is false when the stat failed or the stamp is
// too young to answer from.
func (k *KindCache) stampOf(dir string) (kindKey, bool) {
	start := k.now()
	var st unix.Stat_t
	if err := retryEINTR(func() error { return unix.Stat(dir, &st) }); err != nil {
		return kindKey{}, false
	}
	return keyOf(&st), old(&st, start)
}

// lookAndKeep looks name up through an open descriptor of dir, so that
// the stamp and the answer come from the same directory even if a link
// on the way to it is swapped meanwhile, and keeps the answer when the
// stamp is old enough and the filesystem local. Any failure on the way
// gives the plain lstat's answer, uncached.
func (k *KindCache) lookAndKeep(dir, name, p string) engine.FileKind {
	start := k.now()
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return lstatKind(p)
	}
	defer unix.Close(fd)
	var dst, st unix.Stat_t
	var fs unix.Statfs_t
	if retryEINTR(func() error { return unix.Fstat(fd, &dst) }) != nil ||
		retryEINTR(func() error { return unix.Fstatfs(fd, &fs) }) != nil {
		return lstatKind(p)
	}
	kind := engine.NoFile
	err = retryEINTR(func() error { return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) })
	switch {
	case errors.Is(err, unix.ENOENT):
	case err != nil:
		return lstatKind(p) // not a plain "nothing there": do not remember it
	default:
		kind = kindOfMode(st.Mode)
	}
	if old(&dst, start) && localFS(fs.Type) {
		key := keyOf(&dst)
		key.name = name
		k.mu.Lock()
		if len(k.m) >= k.max {
			clear(k.m)
		}
		k.m[key] = kind
		k.mu.Unlock()
	}
	return kind
}

// keyOf is a directory's identity and change stamp.
func keyOf(st *unix.Stat_t) kindKey {
	return kindKey{dev: st.Dev, ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), size: st.Size, nlink: uint64(st.Nlink)}
}

// old reports whether a directory's stamps (mtime and ctime) are older
// than start by stampMargin.
func old(st *unix.Stat_t, start time.Time) bool {
	limit := start.Add(-stampMargin).UnixNano()
	return st.Mtim.Nano() < limit && st.Ctim.Nano() < limit
}

// localFS reports whether a filesystem stamps changes with this machine's
// clock and changes only through this kernel: the local disk filesystems,
// tmpfs and overlayfs. A network filesystem's stamps come from another
// clock, and another machine may change it.
func localFS(t int64) bool {
	switch t {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.OVERLAYFS_SUPER_MAGIC:
		return true
	}
	return false
}

// kindOfMode is the kind of a file of mode m.
func kindOfMode(m uint32) engine.FileKind {
	switch m & unix.S_IFMT {
	case unix.S_IFLNK:
		return engine.Symlink
	case unix.S_IFDIR:
		return engine.Folder
	}
	return engine.PlainFile
}

// retryEINTR runs f again while it is interrupted.
func retryEINTR(f func() error) error {
	for {
		if err := f(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
