// Package atomicfile writes files so that a crash leaves either the old or the
// new content, never a mix, and serializes writers of a directory with a lock
// file that cooperating processes take too. The config store and the token
// store both write through it.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"
)

// TempPrefix starts the name of every temp file WriteFile creates beside its
// target; RemoveStaleTemps cleans up what a crashed writer left.
const TempPrefix = ".config.yaml."

// WriteFile writes data to a temp file in the same dir, fsyncs it, renames
// it over path and fsyncs the dir. Errors wrap the OS error.
func WriteFile(path string, data []byte, mode fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, TempPrefix+"*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err = f.Chmod(mode); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory, so that a rename in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	return nil
}

// LockDir runs fn holding the lock file name in dir.
func LockDir(dir, name string, fn func() error) error {
	lk := flock.New(filepath.Join(dir, name))
	if err := lk.Lock(); err != nil {
		return fmt.Errorf("lock %s: %w", lk.Path(), err)
	}
	defer lk.Unlock()
	return fn()
}

// RemoveStaleTemps removes temp files a crashed writer left in dir. Call it
// under the dir's lock, so that no live writer owns them.
func RemoveStaleTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, TempPrefix) && strings.HasSuffix(n, ".tmp") {
			os.Remove(filepath.Join(dir, n))
		}
	}
}
