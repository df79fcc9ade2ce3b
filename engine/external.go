package engine

import (
	"path"
	"slices"
	"sort"
	"strings"
)

// extDir is the compiled permissions.external_directory.
type extDir struct {
	fixed bool  // a plain level applies to every external path
	level Level // the plain level, when fixed
	star  Level // the "*" level of a map (default ask)
	keys  []extKey
}

// extKey is one path-prefix key of external_directory.
type extKey struct {
	prefix string // normalized: forward slashes, no trailing /, drive letter lower-cased
	raw    string
	level  Level
}

func (c *compiler) compileExternal(v any) extDir {
	ext := extDir{star: Ask}
	switch val := v.(type) {
	case nil:
		return ext
	case string:
		lvl, ok := c.level("permissions.external_directory", val)
		if !ok {
			lvl = Ask
		}
		return extDir{fixed: true, level: lvl, star: lvl}
	}
	m, ok := asMap(v)
	if !ok {
		c.problem("permissions.external_directory", "must be a level or a mapping of path prefix to level")
		return ext
	}
	for _, k := range sortedKeys(m) {
		kpath := "permissions.external_directory[" + quoteKey(k) + "]"
		lvl, ok := c.level(kpath, m[k])
		if !ok {
			continue
		}
		if k == "*" {
			ext.star = lvl
			continue
		}
		prefix := NormalizeDirKey(k)
		if !strings.Contains(prefix, "/") {
			c.problem(kpath, "ignored: a key must be a path with / (a bare drive letter would match a whole drive)")
			continue
		}
		ext.keys = append(ext.keys, extKey{prefix: prefix, raw: k, level: lvl})
	}
	// Longest prefix first, so the most specific key decides.
	sort.SliceStable(ext.keys, func(i, j int) bool { return len(ext.keys[i].prefix) > len(ext.keys[j].prefix) })
	return ext
}

// NormalizeDirKey normalizes an external_directory key: \ to /, no trailing
// / (but / stays /), drive letter lower-cased.
func NormalizeDirKey(k string) string {
	k = strings.TrimSpace(slashes(k))
	for len(k) > 1 && strings.HasSuffix(k, "/") {
		k = k[:len(k)-1]
	}
	return lowerDrive(k)
}

func lowerDrive(p string) string {
	if hasDriveLetter(p) && p[0] >= 'A' && p[0] <= 'Z' {
		return string(p[0]+('a'-'A')) + p[1:]
	}
	return p
}

// under reports whether p is dir or lies below it.
func under(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

// levelFor returns the level for one external path and the key that gave it.
func (x *extDir) levelFor(p string) (Level, string) {
	if x.fixed {
		return x.level, "*"
	}
	for _, k := range x.keys {
		if under(p, k.prefix) {
			return k.level, k.raw
		}
	}
	return x.star, "*"
}

// absolute makes a path word absolute against dir, cleaned, with forward
// slashes; drive-letter paths are absolute (contract D5). It returns "" when
// a relative path has no base.
func (e *Engine) absolute(w, dir string) string {
	w = slashes(w)
	var abs string
	switch {
	case hasDriveLetter(w):
		rest := w[2:]
		if !strings.HasPrefix(rest, "/") {
			rest = "/" + rest
		}
		return lowerDrive(w[:2]) + path.Clean(rest)
	case strings.HasPrefix(w, "/"):
		abs = path.Clean(w)
	case dir == "":
		return ""
	default:
		abs = path.Join(dir, w)
	}
	if e.opts.ResolvePath != nil && strings.HasPrefix(abs, "/") {
		abs = e.opts.ResolvePath(abs)
	}
	return abs
}

// workspace returns the cleaned, resolved workspace of the request.
func (e *Engine) workspace(req *Request) string {
	ws := req.Workspace
	if ws == "" {
		ws = e.opts.Workspace
	}
	if ws == "" {
		return ""
	}
	if ws == e.opts.Workspace && e.serverWS != "" {
		return e.serverWS
	}
	return e.absolute(ws, "/")
}

// mergeExternal is the external-directory check of spec 2.4 and contract 3:
// paths outside the workspace get the external_directory level, merged
// strictest with the decision, and matched_rule gets |external_directory.*.
func (e *Engine) mergeExternal(d *Decision, req *Request, category Category, command string, sh *ShellAnalysis, tr *tracer) {
	if category != CategoryShell && category != CategoryPath {
		return
	}
	c := extCollector{e: e, req: req, ext: &e.policy.ext, shell: category == CategoryShell}
	if c.shell {
		if sh != nil {
			for _, w := range sh.Paths {
				c.add(w)
			}
		} else {
			eachPlainWord(command, func(w string) {
				if pw, ok := PathWord(w, e.opts.HomeDir); ok {
					c.add(pw)
				}
			})
		}
	} else {
		eachPathValue(req.ToolArgs, func(s string) bool {
			if !isURL(s) {
				c.add(expandHome(s, e.opts.HomeDir))
			}
			return true
		})
	}
	if len(c.paths) == 0 {
		return
	}
	d.ExternalPaths = c.paths
	step := Step{Name: "external_directory", Result: c.level.String(), Hits: c.paths, Detail: "outside the workspace " + c.ws}
	if c.level == Ask || c.level == Deny {
		d.Level = Stricter(d.Level, c.level)
		d.MatchedRule += "|" + c.ruleName()
		step.Rule = d.MatchedRule
		step.Decisive = d.Level == c.level
	}
	tr.add(step)
}

// extCollector gathers the external paths of one call and their level. The
// workspace is resolved only once a path word is found, so a command without
// paths costs no filesystem lookups.
type extCollector struct {
	e        *Engine
	req      *Request
	ext      *extDir
	shell    bool
	ready    bool
	ws, cwd  string
	paths    []string
	seen     map[string]bool // once there are many paths, to keep dedup linear
	words    int
	level    Level
	levelKey string
}

func (c *extCollector) init() {
	c.ready = true
	c.ws = c.e.workspace(c.req)
	c.cwd = c.ws
	if !c.shell {
		return
	}
	if wd, ok := c.req.ToolArgs["workdir"].(string); ok && strings.TrimSpace(wd) != "" {
		c.cwd = c.e.absolute(expandHome(strings.TrimSpace(wd), c.e.opts.HomeDir), c.ws)
	}
}

// MaxPathWords is how many path words of one call are resolved and checked.
// A call with more (a huge generated command) is not checked word by word:
// it counts as external at the "*" level, so hiding a path behind thousands
// of others gains nothing, and no call costs unbounded filesystem lookups.
const MaxPathWords = 1000

// tooManyPaths stands in the external paths of a call with more than
// MaxPathWords path words.
const tooManyPaths = "(more path words than toolgate checks one by one)"

func (c *extCollector) add(word string) {
	if !c.ready {
		c.init()
	}
	if c.words++; c.words > MaxPathWords {
		if c.words == MaxPathWords+1 {
			c.paths = append(c.paths, tooManyPaths)
			c.raise(c.ext.levelFor(tooManyPaths))
		}
		return
	}
	abs := c.e.absolute(word, c.cwd)
	if abs == "" || c.ws != "" && under(abs, c.ws) {
		return
	}
	if !c.isNew(abs) {
		return
	}
	c.paths = append(c.paths, abs)
	c.raise(c.ext.levelFor(abs))
}

// isNew reports whether abs is not among the paths yet, recording it in the
// set once there is one: most calls have a few paths and scan them; a call
// with many switches to a set, to keep the check linear.
func (c *extCollector) isNew(abs string) bool {
	if c.seen == nil {
		if slices.Contains(c.paths, abs) {
			return false
		}
		if len(c.paths) < 16 {
			return true
		}
		c.seen = make(map[string]bool, 64)
		for _, p := range c.paths {
			c.seen[p] = true
		}
	}
	if c.seen[abs] {
		return false
	}
	c.seen[abs] = true
	return true
}

// raise records the level of one more external path.
func (c *extCollector) raise(lvl Level, key string) {
	if c.levelKey == "" || lvl > c.level {
		c.level, c.levelKey = lvl, key
	}
}

// ruleName names what the external check matched: external_directory.* for
// the default, external_directory[<key>] for a key.
func (c *extCollector) ruleName() string {
	if c.levelKey == "*" || c.levelKey == "" {
		return "external_directory.*"
	}
	return "external_directory[" + c.levelKey + "]"
}

// eachPlainWord calls fn with every space-separated word of a plain command.
func eachPlainWord(cmd string, fn func(string)) {
	start := -1
	for i := 0; i <= len(cmd); i++ {
		if i == len(cmd) || cmd[i] == ' ' {
			if start >= 0 {
				fn(cmd[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
}
