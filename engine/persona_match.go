package engine

import (
	"path"
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
	"github.com/toolgate/toolgate/policy"
)

// ownerCall holds the values of one persona call that owner-scope patterns
// match, computed once and only when a pattern needs them.
type ownerCall struct {
	e   *Engine
	req *Request
	// ready is set once plain and paths are filled.
	ready bool
	// plain are the extra plain values deny and ask patterns also match:
	// every string at any depth of tool_args, a command given as an argv
	// array, and every normalized simple command of a command (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
	plain []string
	// paths are the extra path values deny and ask patterns also match:
	// every path value at any depth, with ~ expanded and made absolute
	// (cleaned, symlinks resolved), and the path words of a command.
	paths []string
}

// matches reports whether an owner-scope pattern matches the call. Every
// pattern matches as the reference's _match_args does: each top-level
// string value, a command/cmd value as a command, url as a URL, path and
// file_path as a path, and any string as a plain pattern. A deny or ask
// pattern also matches every form that hides the same value (nested
// values, argv arrays, normalized commands, resolved paths), so that
// obfuscation cannot escape it (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm); an allow pattern keeps the
// reference's matching, so it never grants more than the reference would.
func (c *ownerCall) matches(p *ownerPattern) bool {
	strict := p.level == policy.Allow
	for k, v := range c.req.Call.Args() {
		s, ok := v.(string)
		if !ok || s == "" {
			continue
		}
		switch k {
		case "url":
			for _, f := range urlForms(s, strict) {
				if p.m.matchShell(f) {
					return true
				}
			}
		case "path", "file_path":
			if p.m.matchPath(s) {
				return true
			}
		}
		// command and cmd match as commands: whole-value, as plain values do.
		if p.m.matchShell(s) {
			return true
		}
	}
	if strict {
		return false
	}
	c.prepare()
	for _, s := range c.plain {
		if p.m.matchShell(s) {
			return true
		}
	}
	for _, s := range c.paths {
		if p.m.matchPath(s) {
			return true
		}
	}
	return false
}

// prepare fills plain and paths.
func (c *ownerCall) prepare() {
	if c.ready {
		return
	}
	c.ready = true
	home := c.e.home(c.req)
	ws := c.e.workspace(c.req)
	cwd := ws // a shell command's words are relative to its workdir
	if wd := c.req.Call.Workdir(); wd != "" {
		cwd = c.e.absolute(shell.ExpandHome(wd, home), ws)
		if cwd != "" {
			c.paths = append(c.paths, cwd) // the working directory is a path itself
		}
	}
	addPath := func(s string) {
		if shell.IsURL(s) {
			return
		}
		x := shell.ExpandHome(s, home)
		c.paths = append(c.paths, s, x)
		if abs := c.e.absolute(x, ws); abs != "" {
			c.paths = append(c.paths, abs)
		}
	}
	var walk func(key string, v any, depth int)
	walk = func(key string, v any, depth int) {
		if depth > maxArgDepth {
			return
		}
		switch val := v.(type) {
		case string:
			s := strings.TrimSpace(val)
			if s == "" {
				return
			}
			c.plain = append(c.plain, s)
			if isPathValue(key, s) {
				addPath(s)
			}
			if key == "command" || key == "cmd" {
				c.addCommand(s, cwd)
			}
		case []any:
			if key == "command" || key == "cmd" {
				if argv, ok := stringList(val); ok {
					joined := strings.Join(argv, " ")
					c.plain = append(c.plain, joined)
					c.addCommand(joined, cwd)
				}
			}
			for _, item := range val {
				walk(key, item, depth+1)
			}
		case map[string]any:
			for k, item := range val {
				walk(k, item, depth+1)
			}
		}
	}
	for k, v := range c.req.Call.Args() {
		walk(k, v, 0)
	}
}

// maxArgDepth bounds how deep prepare looks into nested tool_args.
const maxArgDepth = 32

// addCommand adds the simple commands of a shell command (its words joined
// by single spaces, and again with the program by its base name), the
// analysis's normalized commands (every command a wrapper runs: env rm,
// sudo rm, timeout 5 rm give rm), and its path words, made absolute against
// the command's working directory. The analysis gets the same environment
// as the ordinary path's.
func (c *ownerCall) addCommand(cmd, cwd string) {
	var a shell.Analysis
	if shell.NeedsFullParse(cmd) {
		a = shell.AnalyzeEnv(cmd, c.e.shellEnv(c.req))
		c.plain = append(c.plain, a.Normalized...)
	} else {
		// Plain words only: the command is its space-separated words, as
		// the external check reads it, without the cost of a parse.
		words := strings.Fields(cmd)
		a.Commands = [][]string{words}
		for _, w := range words {
			if pw, ok := shell.PathWord(w, c.e.home(c.req)); ok {
				a.Paths = append(a.Paths, pw)
			}
		}
	}
	for _, words := range a.Commands {
		if len(words) == 0 {
			continue
		}
		c.plain = append(c.plain, strings.Join(words, " "))
		if base := path.Base(slashes(words[0])); base != words[0] {
			c.plain = append(c.plain, strings.Join(append([]string{base}, words[1:]...), " "))
		}
		// A bare operand may name a file in the working directory
		// (cat shadow with workdir /etc).
		for _, w := range words[1:] {
			if w != "" && !strings.HasPrefix(w, "-") && !shell.IsURL(w) {
				if abs := c.e.absolute(w, cwd); abs != "" {
					c.paths = append(c.paths, abs)
				}
			}
		}
	}
	for _, w := range a.Paths {
		c.paths = append(c.paths, w)
		if abs := c.e.absolute(w, cwd); abs != "" {
			c.paths = append(c.paths, abs)
		}
	}
}

// stringList returns a list whose items are all strings.
func stringList(l []any) ([]string, bool) {
	out := make([]string, 0, len(l))
	for _, item := range l {
		s, ok := item.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// urlForms are the forms of a URL an owner-scope pattern is matched
// against besides the whole value, as the reference's URL matcher tries
// them: the host name (lower case), the netloc, scheme://netloc and
// scheme://netloc/*. With strict (an allow pattern), a URL whose host part
// could be read two ways (user info, a backslash, blanks or control
// characters) gives none, so that an allow for one host cannot be stretched
// to a URL a client sends elsewhere.
func urlForms(raw string, strict bool) []string {
	i := strings.Index(raw, "://")
	if i <= 0 || !isScheme(raw[:i]) {
		return nil
	}
	rest := raw[i+3:]
	netloc := rest
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		netloc = rest[:end]
	}
	if strict && (strings.ContainsAny(raw, "@\\") || hasBlankOrControl(raw)) {
		return nil
	}
	host := netloc
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	if strings.HasPrefix(host, "[") {
		if end := strings.IndexByte(host, ']'); end > 0 {
			host = host[1:end]
		}
	} else if colon := strings.LastIndexByte(host, ':'); colon >= 0 {
		host = host[:colon]
	}
	base := strings.ToLower(raw[:i]) + "://" + netloc
	return []string{strings.ToLower(host), netloc, base, base + "/*"}
}

// isScheme reports whether s is a URL scheme: a letter, then letters,
// digits, + - or .
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		letter := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z'
		if i == 0 && !letter || !letter && !(ch >= '0' && ch <= '9' || ch == '+' || ch == '-' || ch == '.') {
			return false
		}
	}
	return s != ""
}

func hasBlankOrControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}
