// Package ascii builds byte tables for the engine's hot loops: which bytes
// a glob's * may match, which a command may hold to skip the shell parser.
// It owns the tables' construction, not what any table means; it imports
// no toolgate package.
package ascii

// AlnumAnd is the table that marks the ASCII letters and digits and each
// byte of extra (which must be ASCII), and no other byte.
func AlnumAnd(extra string) (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for i := 0; i < len(extra); i++ {
		t[extra[i]] = true
	}
	return t
}
