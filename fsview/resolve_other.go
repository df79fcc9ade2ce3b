//go:build !linux

package fsview

import (
	"os"

	"github.com/toolgate/toolgate/engine"
)

// noSymlinkLookup has no one-call answer outside Linux; the lstat walk
// decides.
func noSymlinkLookup(string) lookupState { return lookupUnknown }

// lstatKind is one os.Lstat.
func lstatKind(p string) engine.FileKind {
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return engine.NoFile
	case fi.Mode()&os.ModeSymlink != 0:
		return engine.Symlink
	case fi.IsDir():
		return engine.Folder
	}
	return engine.PlainFile
}
