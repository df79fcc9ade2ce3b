//go:build !linux

package store

// noSymlinkLookup has no one-call answer outside Linux; the lstat walk
// decides.
func noSymlinkLookup(string) lookupState { return lookupUnknown }
