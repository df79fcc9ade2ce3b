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

// InputMark stands for the arguments xargs or parallel add to a command
// from input the analysis does not read (stdin, a file, a replacement
// string): an unknown part (it starts with UnknownMark) that may be any
// words at all, so a deny or ask glob lets it stand for any text
// (docs/decisions.md#unread-input). A \x01 a command itself holds only
// makes deny and ask globs meet more, never less.
const InputMark = UnknownMark + "\x01"

// InputByte is the byte of InputMark that says "any text".
const InputByte = '\x01'

// unknownByte is UnknownMark as a byte.
const unknownByte = '\x00'

// HasUnknown reports whether an expanded word or command holds an unknown
// part (UnknownMark).
func HasUnknown(s string) bool { return strings.IndexByte(s, unknownByte) >= 0 }
