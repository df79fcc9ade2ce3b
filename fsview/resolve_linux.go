package fsview

import (
	"errors"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/toolgate/toolgate/engine"
)

// openat2Broken is set once openat2 proves unusable (an old kernel or a
// seccomp filter), so later lookups go straight to the walk.
var openat2Broken atomic.Bool

// noSymlinkLookup asks the kernel, in one openat2 with RESOLVE_NO_SYMLINKS
// (and a close), whether resolving p (clean, with no ..) meets a symlink.
// The answer settles it when p exists without symlinks (lookupExists), or
// a component is missing (ENOENT, ENOTDIR) with none before it
// (lookupMissing), since resolution stops at the first symlink with ELOOP
// before it reaches anything further. Either way p is its own resolution.
// Any other answer (ELOOP, EACCES, ENOSYS, …) leaves it to the lstat walk.
func noSymlinkLookup(p string) lookupState {
	if openat2Broken.Load() {
		return lookupUnknown
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	for {
		fd, err := unix.Openat2(unix.AT_FDCWD, p, &how)
		switch {
		case err == nil:
			_ = unix.Close(fd)
			return lookupExists
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			continue
		case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
			return lookupMissing
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			openat2Broken.Store(true)
			return lookupUnknown
		default:
			return lookupUnknown
		}
	}
}

// lstatKind is one lstat into a Stat_t on the stack (os.Lstat would
// allocate a FileInfo).
func lstatKind(p string) engine.FileKind {
	var st unix.Stat_t
	for {
		err := unix.Lstat(p, &st)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		switch {
		case err != nil:
			return engine.NoFile
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			return engine.Symlink
		case st.Mode&unix.S_IFMT == unix.S_IFDIR:
			return engine.Folder
		}
		return engine.PlainFile
	}
}
