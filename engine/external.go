package engine

import (
	"path"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
	"github.com/toolgate/toolgate/policy"
)

// extDir is the compiled permissions.external_directory.
type extDir struct {
	fixed bool         // a plain level applies to every external path
	level policy.Level // the plain level, when fixed
	star  policy.Level // the "*" level of a map (default ask)
	keys  []extKey
}

// extKey is one path-prefix key of external_directory.
type extKey struct {
	prefix string // normalized: forward slashes, no trailing /, drive letter lower-cased
	raw    string
	level  policy.Level
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
	if shell.HasDriveLetter(p) && p[0] >= 'A' && p[0] <= 'Z' {
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
func (x *extDir) levelFor(p string) (policy.Level, string) {
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

// levelForUnknown is the level of an external path that cannot be known:
// it may lie under any key, so it gets the strictest of "*" and every key
// (an unknown path is under no allow key, docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
func (x *extDir) levelForUnknown() (policy.Level, string) {
	if x.fixed {
		return x.level, "*"
	}
	lvl, key := x.star, "*"
	for _, k := range x.keys {
		if k.level > lvl {
			lvl, key = k.level, k.raw
		}
	}
	return lvl, key
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

// mergeExternal is the external-directory check of docs/decisions.md#the-order-of-the-steps and docs/decisions.md:
// paths outside the workspace get the external_directory level, merged
// strictest with the decision, and matched_rule gets |external_directory.*.
// For a shell tool the working directory (workdir or cwd) is itself a path,
// and bare words that are symlinks are followed (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
func (e *Engine) mergeExternal(d *Decision, req *Request, category Category, command string, sh *shell.Analysis, ctx *overrideCtx, tr *tracer) {
	if category != CategoryShell && category != CategoryPath {
		return
	}
	c := extCollector{e: e, req: req, ext: &e.policy.ext, shell: category == CategoryShell, memo: ctx.memo, workdir: ctx.workdir}
	if c.shell {
		c.shellPaths(command, sh)
	} else {
		for i := range req.Call.NumPaths() {
			p := req.Call.Path(i)
			if !isNetworkURL(p.Value) {
				x := shell.ExpandHome(p.Value, e.home(req))
				c.add(x)
				c.addCleaned(x)
			}
		}
		c.addBareValues(req.Call.Args())
	}
	e.resolvedPathRules(d, req.Call.Tool(), c.moved, c.movedUser, tr)
	e.globRules(d, req.Call.Tool(), c.globs, tr)
	if len(c.paths) == 0 {
		return
	}
	d.ExternalPaths = c.paths
	step := Step{Name: "external_directory", Result: levelWords[c.level], Hits: c.paths, Detail: "outside the workspace " + c.ws}
	if c.level == policy.Ask || c.level == policy.Deny {
		if c.level > d.Level {
			d.Cause = CauseExternal
		}
		d.Level = max(d.Level, c.level)
		d.MatchedRule += "|" + c.ruleName()
		step.Rule = d.MatchedRule
		step.Decisive = d.Level == c.level
	}
	tr.add(step)
}

// shellPaths adds the paths of a shell command: its working directory, its
// path words (from the analysis, or the plain words of a command that
// needed none) and its bare words that are symlinks.
func (c *extCollector) shellPaths(command string, sh *shell.Analysis) {
	if c.workdir {
		c.init() // the working directory is judged even with no path word
	}
	home := c.e.home(c.req)
	if sh != nil {
		for _, w := range sh.Paths {
			c.add(w)
			c.addCleaned(w)
		}
	} else if shell.MayHoldPath(command) { // no word names a path without one of its bytes
		eachPlainWord(command, func(w string) {
			if pw, ok := shell.PathWord(w, home); ok {
				c.add(pw)
				c.addCleaned(pw)
			}
			if v, ok := shell.ShortOptionValue(w); ok {
				v = shell.ExpandHome(v, home)
				c.add(v)
				c.addCleaned(v)
			}
		})
	}
	c.addOptionPaths(command, sh)
	if sh != nil {
		for _, words := range sh.Commands {
			for i := 1; i < len(words); i++ {
				c.addGlob(words[i])
				c.addRevisionPath(words[i])
			}
		}
	} else if strings.IndexByte(command, ':') >= 0 { // a REV:path word needs its colon
		eachPlainWord(command, func(w string) { c.addRevisionPath(w) })
	}
	if c.e.opts.KindOf == nil || c.e.opts.ResolvePath == nil {
		return // no filesystem to look bare words up in
	}
	if sh != nil {
		for _, words := range sh.Commands {
			for i := 1; i < len(words); i++ {
				c.addBare(words[i])
			}
		}
		return
	}
	first := true
	eachPlainWord(command, func(w string) {
		if !first {
			c.addBare(w)
		}
		first = false
	})
}

// extCollector gathers the external paths of one call and their level. The
// workspace is resolved only once a path word is found (or the call names a
// working directory), so a command without paths costs no filesystem
// lookups.
type extCollector struct {
	e     *Engine
	req   *Request
	ext   *extDir
	shell bool
	ready bool
	ws    string
	// bases are the directories relative words are resolved against: the
	// workspace, or the resolved workdir and cwd of a shell call.
	bases    [2]string
	nbases   int
	paths    []string
	seen     map[string]bool // once there are many paths, to keep dedup linear
	words    int
	level    policy.Level
	levelKey string
	// kindOf is the call's KindOf (Options.CallKindOf), made at the first
	// bare word.
	kindOf func(string) FileKind
	// memo, when set, shares resolutions with the call's resolved
	// normalized commands (paths_norms.go).
	memo *resolveMemo
	// workdir: the shell call names a working directory (hasWorkdir).
	workdir bool
	// moved are the resolved path values of a path tool that lie outside
	// the workspace and differ from their text (paths_rules.go).
	moved []string
	// movedUser are the absolute forms of a shell command's relative path
	// words that lie in the workspace as written (no link, no ..): only
	// user rules see them, as built-in rules name places by their own
	// spelling and would cost every command a pass (paths_rules.go).
	movedUser []string
	// globs are the filename globs of a shell command that could not be
	// expanded on this host, as absolute patterns (paths_rules.go).
	globs []string
}

// workdirKeys are the shell-tool arguments that set the working directory.
var workdirKeys = [...]string{"workdir", "cwd"}

// hasWorkdir reports whether a shell call names a working directory.
func hasWorkdir(args map[string]any) bool {
	for _, k := range workdirKeys {
		if _, ok := args[k]; ok {
			return true
		}
	}
	return false
}

func (c *extCollector) init() {
	if c.ready {
		return
	}
	c.ready = true
	c.ws = c.e.workspace(c.req)
	if c.shell {
		for _, k := range workdirKeys {
			c.addWorkdir(c.req.Call.Args()[k])
		}
	}
	if c.nbases == 0 {
		c.bases[0], c.nbases = c.ws, 1
	}
}

// addWorkdir judges a working directory as a path (cat shadow with workdir
// /etc reads /etc/shadow) and makes it a base for relative words.
func (c *extCollector) addWorkdir(v any) {
	wd, ok := v.(string)
	if !ok || strings.TrimSpace(wd) == "" {
		return
	}
	w := shell.ExpandHome(strings.TrimSpace(wd), c.e.home(c.req))
	abs, known := c.memo.resolve(c.e, w, c.ws)
	if !known {
		c.external(unknownPathLabel(w), true)
		return
	}
	if abs == "" {
		return
	}
	c.judge(abs)
	if c.nbases < len(c.bases) && (c.nbases == 0 || c.bases[0] != abs) {
		c.bases[c.nbases] = abs
		c.nbases++
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

// add judges one path word: resolved against every base, it is external
// when it lies outside the workspace or cannot be known.
func (c *extCollector) add(word string) {
	c.init()
	if !c.count() {
		return
	}
	for i := 0; i < c.nbases; i++ {
		abs, known := c.memo.resolve(c.e, word, c.bases[i])
		if !known {
			c.external(unknownPathLabel(word), true)
			continue
		}
		if abs != "" {
			c.judge(abs)
			switch {
			case abs == word:
			case c.shell && c.plainInside(word, abs, c.bases[i]):
				c.movedUser = append(c.movedUser, abs) // resolvedPathRules
			default:
				c.moved = append(c.moved, abs) // resolvedPathRules
			}
		}
	}
}

// count counts one more word to resolve; past MaxPathWords the call counts
// as external and no more words are resolved.
func (c *extCollector) count() bool {
	if c.words++; c.words > MaxPathWords {
		if c.words == MaxPathWords+1 {
			c.external(tooManyPaths, true)
		}
		return false
	}
	return true
}

// addBare follows a bare word (no slash) that is a symlink in a base
// directory: `cat evil`, where evil links out of the workspace, reads
// outside it. A word costs one lookup (KindOf), which also tells a folder;
// only a link is resolved.
func (c *extCollector) addBare(w string) {
	if !isBareCandidate(w) {
		return
	}
	c.init()
	if !c.count() {
		return
	}
	for i := 0; i < c.nbases; i++ {
		base := c.bases[i]
		if !strings.HasPrefix(base, "/") {
			continue
		}
		lex := base + "/" + w
		if base == "/" {
			lex = "/" + w
		}
		if kind := c.kind(lex); kind != Symlink {
			if c.shell && kind == Folder {
				// A folder named bare (grep -r . secrets): its
				// files are reached, which path rules see.
				c.moved = append(c.moved, lex)
			}
			continue // the common case: one lookup, no link
		}
		r := c.e.opts.ResolvePath(lex)
		switch {
		case r == "":
			c.external(lex, true)
		case r != lex:
			c.judge(path.Clean(r))
			c.moved = append(c.moved, path.Clean(r)) // resolvedPathRules
		}
	}
}

// kind is the call's KindOf: Options.CallKindOf's for this call when it
// is set, else Options.KindOf.
func (c *extCollector) kind(p string) FileKind {
	if c.kindOf == nil {
		c.kindOf = c.e.opts.KindOf
		if c.e.opts.CallKindOf != nil {
			c.kindOf = c.e.opts.CallKindOf()
		}
	}
	return c.kindOf(p)
}

// isBareCandidate reports whether a command word may name a file in the
// working directory that is not already judged as a path word: no slash,
// not an option, not . or .., no unknown part, not a ~ form.
func isBareCandidate(w string) bool {
	if w == "" || w == "." || w == ".." || w[0] == '-' || w[0] == '~' || len(w) > 255 {
		return false
	}
	return strings.IndexByte(w, '/') < 0 && strings.IndexByte(w, '\\') < 0 && !shell.HasUnknown(w)
}

// judge records abs when it lies outside the workspace.
func (c *extCollector) judge(abs string) {
	if c.ws != "" && under(abs, c.ws) {
		return
	}
	c.external(abs, false)
}

// external records one external path; an unknown one gets the level of a
// path under no allow key.
func (c *extCollector) external(p string, unknown bool) {
	if !c.isNew(p) {
		return
	}
	c.paths = append(c.paths, p)
	if unknown {
		c.raise(c.ext.levelForUnknown())
	} else {
		c.raise(c.ext.levelFor(p))
	}
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
func (c *extCollector) raise(lvl policy.Level, key string) {
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
