package shell

import "strings"

// UnknownMark stands, inside an expanded shell word, for a part whose value
// cannot be known statically: a variable the script never assigns, $1, $@,
// a command substitution, an arithmetic expansion, ~user of another user.
// It is a NUL byte because no real argument can hold one (the kernel takes
// argv as C strings), so it never collides with text a command could mean.
// A path word holding it counts as external, and a command name holding it
// is never allowed by an allow rule or an override (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
const UnknownMark = "\x00"

// unknownByte is UnknownMark as a byte.
const unknownByte = '\x00'

// HasUnknown reports whether an expanded word or command holds an unknown
// part (UnknownMark).
func HasUnknown(s string) bool { return strings.IndexByte(s, unknownByte) >= 0 }
