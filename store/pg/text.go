package pg

import (
	"strings"
	"unicode/utf8"
)

// Text is s as a PostgreSQL text value can hold it: a NUL byte or a byte
// that is not UTF-8 becomes U+FFFD. The server refuses both, and one
// agent's NUL in a tool argument (JSON "\u0000" decodes to it) must not
// cost the whole batch it shares with other calls. SQLite keeps such bytes;
// this is the one place a store's two backends can answer differently.
func Text(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
