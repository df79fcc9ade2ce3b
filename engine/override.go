package engine

import (
	"cmp"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
)

// overrideCtx is what the override check needs beyond the matched values:
// the engine (its resolver and home), the request (workspace, arguments,
// working directory) and the shell analysis, when one was made. Evaluate
// fills it; the zero value (no engine) makes every override check fail.
type overrideCtx struct {
	e   *Engine
	req *Request
	sh  *shell.Analysis
	// memo shares path resolutions within the call (paths_norms.go); nil
	// until a shell call needs one.
	memo *resolveMemo
	// workdir: the shell call names a working directory (hasWorkdir),
	// looked up once.
	workdir bool
}

// collectWithin appends to buf the overrides of idx for tool, in file order,
// that match the call as the reference matches it and that keep the call
// inside what was approved (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm, last point).
// Every such override is named in matched_rule (docs/decisions.md).
func (idx *ruleIndex) collectWithin(tool string, v *callValues, buf []*rule) []*rule {
	if idx.rulesOf(tool) == nil {
		return buf
	}
	hits := idx.collect(tool, v, buf)
	kept := hits[:0]
	for _, r := range hits {
		if v.ctx.within(r) {
			kept = append(kept, r)
		}
	}
	if v.category == CategoryShell {
		kept = idx.addDirSpellings(tool, v, kept)
	}
	return kept
}

// addDirSpellings appends the /add-dir shell overrides whose directory the
// command names in another spelling than the one its pattern holds (~/x,
// $HOME/x, ../x): the override is judged on the resolved paths, as a path
// tool's is, and never covers more than its directory (shellWithin;
// docs/decisions.md#add-dir-spellings). The hits stay in file order.
func (idx *ruleIndex) addDirSpellings(tool string, v *callValues, kept []*rule) []*rule {
	dirs := idx.rulesOf(tool).addDirs
	if len(dirs) == 0 {
		return kept
	}
	added := false
	for _, r := range dirs {
		if !slices.Contains(kept, r) && r.addDir != shell.UnknownMark && v.ctx.shellWithin(r.addDir) {
			kept = append(kept, r)
			added = true
		}
	}
	if added {
		slices.SortStableFunc(kept, func(a, b *rule) int { return cmp.Compare(a.order, b.order) })
	}
	return kept
}

// within reports whether an override that matched the call covers all of
// it: a path override must match every path value, each resolved first; a
// shell override from /add-dir must find its directory in a path word of
// the command, with every path word under that directory or inside the
// workspace. Other shell overrides (an exact command from "always allow")
// keep the reference's match.
func (c *overrideCtx) within(r *rule) bool {
	if c.e == nil {
		return false
	}
	switch r.category {
	case CategoryPath:
		return c.pathWithin(r.m)
	case CategoryShell:
		if r.addDir == "" {
			return true
		}
		return c.shellWithin(r.addDir)
	}
	return false
}

// pathWithin reports whether every path value of the call is covered by m:
// its resolved form matches, or it is written plainly (no . or .., no
// unknown part) and names the place it resolves to, and its text matches.
// A value under a key that is not a path key (content that holds a /) may
// instead lie inside the workspace.
func (c *overrideCtx) pathWithin(m *matcher) bool {
	ws := c.e.workspace(c.req)
	home := c.e.home(c.req)
	n := c.req.Call.NumPaths()
	for i := range n {
		p := c.req.Call.Path(i)
		if !c.pathValueWithin(m, p.Key, p.Value, ws, home) {
			return false
		}
	}
	return n > 0
}

func (c *overrideCtx) pathValueWithin(m *matcher, k, v, ws, home string) bool {
	if isNetworkURL(v) {
		return m.matchPath(v) // not a local path: the text itself was approved
	}
	x := shell.ExpandHome(v, home)
	abs, known := c.e.resolveWord(x, ws)
	if !known {
		return false
	}
	if abs == "" { // no workspace to resolve a relative value against
		return plainPath(x) && (m.matchPath(v) || m.matchPath(x))
	}
	if m.matchPath(abs) {
		return true
	}
	if (m.matchPath(v) || m.matchPath(x)) && plainPath(x) && lexicalAbs(x, ws) == abs {
		return true
	}
	return !isPathKey(k) && ws != "" && under(abs, ws)
}

// plainPath reports whether a path value is written as its clean self: no
// . or .. components, no doubled or trailing slash, no unknown part and no
// file: URL, so that its text names what it resolves to (unless a symlink
// is crossed, which lexicalAbs tells).
func plainPath(p string) bool {
	if shell.HasUnknown(p) {
		return false
	}
	if _, ok := fileURLPath(p); ok {
		return false
	}
	s := slashes(p)
	if shell.HasDriveLetter(s) {
		s = s[2:]
	}
	return s != "" && path.Clean(s) == s
}

// lexicalAbs is a plain path made absolute against ws without looking at
// the filesystem.
func lexicalAbs(p, ws string) string {
	s := slashes(p)
	if shell.HasDriveLetter(s) {
		return lowerDrive(s)
	}
	if strings.HasPrefix(s, "/") {
		return s
	}
	return path.Join(ws, s)
}

// shellWithin reports whether a shell call stays inside an /add-dir
// directory: its command is known, one of its path words (or its working
// directory) lies under dir, and every path word and working directory
// lies under dir or inside the workspace. A word in a comment is no word,
// and script text given to another shell is read by the analysis, so its
// paths count too.
func (c *overrideCtx) shellWithin(dir string) bool {
	if shell.HasUnknown(dir) {
		return false
	}
	sh := c.sh
	if sh != nil {
		if sh.Opaque() {
			return false
		}
		for _, words := range sh.Commands {
			for _, w := range words {
				if shell.HasUnknown(w) {
					return false // $X could be any path
				}
			}
		}
	}
	// The collector resolves the workspace and the working directories as
	// the external check does.
	col := extCollector{e: c.e, req: c.req, ext: &c.e.policy.ext, shell: true}
	col.init()
	for _, k := range workdirKeys {
		if wd, isStr := c.req.Call.Args()[k].(string); isStr && strings.TrimSpace(wd) != "" {
			if _, known := c.e.resolveWord(shell.ExpandHome(strings.TrimSpace(wd), c.e.home(c.req)), col.ws); !known {
				return false
			}
		}
	}
	trusted := c.e.absolute(dir, "/")
	found, ok := false, true
	judge := func(abs string) {
		switch {
		case under(abs, trusted):
			found = true
		case col.ws != "" && under(abs, col.ws):
		default:
			ok = false
		}
	}
	for i := 0; i < col.nbases; i++ {
		if col.bases[i] != "" { // "" is no workspace: relative words then fail
			judge(col.bases[i])
		}
	}
	word := func(w string) {
		for i := 0; i < col.nbases && ok; i++ {
			abs, known := c.e.resolveWord(w, col.bases[i])
			if !known || abs == "" {
				ok = false
				return
			}
			judge(abs)
		}
	}
	if sh != nil {
		for _, w := range sh.Paths {
			word(w)
		}
		// Every expanded word that reads as a path counts too, even where
		// the external check follows the reference (a bare $HOME).
		for _, words := range sh.Commands {
			for _, w := range words {
				if pw, isPath := shell.PathWord(w, c.e.home(c.req)); isPath {
					word(pw)
				}
			}
		}
	} else {
		eachPlainWord(c.req.Call.Command(), func(w string) {
			if pw, isPath := shell.PathWord(w, c.e.home(c.req)); isPath {
				word(pw)
			}
		})
	}
	return found && ok
}

// addDirOf returns the directory of a shell override that /add-dir wrote
// (docs/decisions.md: id cli_trusted_shell_<hash> or source cli_add_dir, pattern
// re:.*<escaped dir>.*), or "" for any other override. An /add-dir override
// whose pattern is not of that form gets shell.UnknownMark, which nothing lies
// under, so it never allows.
func addDirOf(id, source, pattern string) string {
	if !strings.HasPrefix(id, "cli_trusted_shell_") && source != "cli_add_dir" {
		return ""
	}
	inner, ok := strings.CutPrefix(pattern, "re:.*")
	if ok {
		inner, ok = strings.CutSuffix(inner, ".*")
	}
	if !ok || inner == "" {
		return shell.UnknownMark
	}
	// regexp.QuoteMeta escapes a byte with a backslash before it, which the
	// shell's unescape undoes; the round trip below refuses anything else
	// (a backslash-newline among them, which QuoteMeta never writes).
	dir := shell.Unescape(inner)
	if regexp.QuoteMeta(dir) != inner || !strings.HasPrefix(dir, "/") && !shell.HasDriveLetter(dir) {
		return shell.UnknownMark
	}
	return dir
}
