package importer

import (
	"path"
	"regexp"
	"strings"
)

// gitignoreRegexp turns a gitignore-style path pattern, relative to the
// absolute directory base, into a toolgate re: pattern that matches the
// same absolute paths: * and ? stay within one path segment, ** spans
// segments, [...] is a class, a pattern with no slash but a trailing one
// matches at any depth under base, and a match also covers everything
// under it (gitignore's rule for a directory). A regexp, not a glob,
// because a toolgate glob's * also crosses /, which would allow more than
// the source did.
func gitignoreRegexp(base, pattern string) string {
	p := strings.TrimPrefix(pattern, "./")
	dirOnly := strings.HasSuffix(p, "/")
	p = strings.TrimSuffix(p, "/")
	anyDepth := !strings.Contains(p, "/")
	p = strings.TrimPrefix(p, "/")
	var b strings.Builder
	b.WriteString("re:^")
	b.WriteString(regexp.QuoteMeta(strings.TrimSuffix(base, "/")))
	b.WriteString("/")
	if anyDepth {
		b.WriteString("(?:.*/)?")
	}
	b.WriteString(segmentsRegexp(p))
	if dirOnly {
		b.WriteString("/.*$")
	} else {
		b.WriteString("(?:/.*)?$")
	}
	return b.String()
}

// segmentsRegexp is the body of gitignoreRegexp.
func segmentsRegexp(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case strings.HasPrefix(p[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(p[i:], "/**") && i+3 == len(p):
			b.WriteString("/.*")
			i += 2
		case strings.HasPrefix(p[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(p[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := p[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	return b.String()
}

// wildcardRegexp turns a pattern whose only wildcards are * (any run of
// characters) and ? (one character) into an RE2 body, the rest literal;
// star and one are what the two wildcards become.
func wildcardRegexp(pattern, star, one string) string {
	var b strings.Builder
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(star)
		case '?':
			b.WriteString(one)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return b.String()
}

// jsonStringChars matches the text of one JSON string, escapes included,
// up to its closing quote; jsonStringChar is one of its characters.
const (
	jsonStringChars = `(?:[^"\\]|\\.)*`
	jsonStringChar  = `(?:[^"\\]|\\.)`
)

// shellGlob is a source's command pattern, where * is any run of
// characters and everything else is literal, as a toolgate pattern for a
// shell tool: the glob itself when toolgate reads it the same way, else a
// regexp. A toolgate glob's * and ? are wildcards and \ reads as /, so a
// pattern with ? or \ becomes a regexp. An allow glob's * in toolgate
// never spans ; & | $ ` ( ) < > or a newline, so it allows no more than
// the source's * did (docs/decisions.md#patterns).
func shellGlob(pattern string) string {
	if !strings.ContainsAny(pattern, `?\`) {
		return pattern
	}
	return "re:^" + wildcardRegexp(pattern, ".*", `\?`) + "$"
}

// plainWord reports whether a command token reads the same quoted or not,
// so a pattern built from tokens joined by spaces matches the command's
// text as the agent's shell would run it.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`).MatchString

// prefixGlob is a toolgate glob for commands that start with the words of
// prefix: the prefix itself and anything after a space.
func prefixGlob(prefix string) string { return prefix + " *" }

// hostRegexp is an args re: pattern for calls whose url member names host
// (any case), as a web fetch tool's arguments' canonical JSON holds it:
// scheme, then the host, then a port, a path, a query or the string's
// end. The url must be a member of the arguments' top object, so text
// inside another string (its quotes escaped) never matches.
func hostRegexp(host string) string {
	return `re:(?i)(?:^\{|,)"url":"[a-z][a-z0-9+.-]*://` + regexp.QuoteMeta(host) + `(?::[0-9]+)?(?:[/?#]` + jsonStringChars + `)?"`
}

// urlRegexp is an args re: pattern for calls whose url member matches a
// wildcard pattern (* any run, ? one character), the whole string.
func urlRegexp(pattern string) string {
	return `re:(?:^\{|,)"url":"` + wildcardRegexp(pattern, jsonStringChars, jsonStringChar) + `"`
}

// joinPath is base/p, cleaned.
func joinPath(base, p string) string { return path.Clean(base + "/" + p) }

// globsMeet reports whether some text matches both wildcard patterns (*
// any run, ? one character, the rest literal): two source entries that
// can meet the same call.
func globsMeet(p, q string) bool {
	memo := map[[2]int]bool{}
	var meet func(i, j int) bool
	meet = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var v bool
		switch {
		case i == len(p) && j == len(q):
			v = true
		case i < len(p) && p[i] == '*':
			v = meet(i+1, j) || j < len(q) && meet(i, j+1)
		case j < len(q) && q[j] == '*':
			v = meet(i, j+1) || i < len(p) && meet(i+1, j)
		case i == len(p) || j == len(q):
			v = false
		default:
			v = (p[i] == q[j] || p[i] == '?' || q[j] == '?') && meet(i+1, j+1)
		}
		memo[key] = v
		return v
	}
	return meet(0, 0)
}
