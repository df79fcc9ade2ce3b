package shell

// The helpers below are the small vocabulary the rest of the engine shares
// with the analysis: how a path word, a home, a drive letter, a URL and an
// environment name are recognized, so that both read a command alike.

// ExpandHome expands a leading ~ or $HOME of a path to home.
func ExpandHome(p, home string) string { return expandHome(p, home) }

// HasDriveLetter reports whether a path starts with a Windows drive letter.
func HasDriveLetter(p string) bool { return hasDriveLetter(p) }

// IsWordByte reports whether a byte may be part of a plain command word.
func IsWordByte(c byte) bool { return isWordByte(c) }

// IsURL reports whether a word is a URL (scheme://...).
func IsURL(s string) bool { return isURL(s) }

// IsEnvName reports whether s is a shell variable name.
func IsEnvName(s string) bool { return isEnvName(s) }

// LaunchReadings calls visit with each launch reading of one simple command
// (launch.go) and reports false when it stopped at maxLaunchReadings.
func LaunchReadings(s string, argv []string, visit func(reading string)) bool {
	return launchReadings(s, argv, visit)
}

// Slashes replaces \ with /, allocating only when there is a \.
func Slashes(v string) string { return slashes(v) }

// MayHoldPath reports whether text has a byte a path word needs (/ \ ~ :
// or a dot): a plain command without one has no path word and no glued
// option value (PathWord, ShortOptionValue).
func MayHoldPath(text string) bool { return mayHoldPath(text) }

// Unescape resolves the backslash escapes of an unquoted word: \x is x and a
// backslash-newline disappears.
func Unescape(s string) string { return unescape(s, false) }
