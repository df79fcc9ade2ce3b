//go:build !linux

package store

import "os"

// noSymlinkLookup has no one-call answer outside Linux; the lstat walk
// decides.
func noSymlinkLookup(string) lookupState { return lookupUnknown }

// lstatIsLink is one os.Lstat.
func lstatIsLink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}
