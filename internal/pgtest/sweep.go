package pgtest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ownerLock is the file in a cluster's temp dir that the test process
// holds an exclusive flock on for the cluster's life. The kernel drops the
// lock when that process dies, however it dies, so a dir whose lock can be
// taken belongs to nobody: a binary that used Shared without Main, or was
// killed by go test's timeout, left it (its server got SIGQUIT).
const ownerLock = "owner.lock"

// holdOwnerLock creates and locks dir's owner lock; the file stays open
// (and locked) until the cluster is closed. Go opens it close-on-exec, so
// the server does not inherit it.
func holdOwnerLock(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, ownerLock), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// sweep removes the temp dirs of clusters under root whose owner is gone
// and whose server is not running, so leftovers do not pile up in /tmp.
// Dirs of live test processes are locked and left alone.
func sweep(root string) {
	dirs, _ := filepath.Glob(filepath.Join(root, "pgtest-*"))
	for _, dir := range dirs {
		if abandoned(dir) {
			os.RemoveAll(dir)
		}
	}
}

// abandoned reports whether dir's owner lock can be taken (its owner is
// dead) and no postmaster of it is alive. A dir without the lock file is
// not ours to judge (one being made, or of another tool).
func abandoned(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, ownerLock), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false
	}
	return !postmasterAlive(filepath.Join(dir, "data", "postmaster.pid"))
}

// postmasterAlive reads the pid on postmaster.pid's first line and asks
// the kernel whether it runs (EPERM: it runs as another user).
func postmasterAlive(pidFile string) bool {
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(string(data), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return false
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
