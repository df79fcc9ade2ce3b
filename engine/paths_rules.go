package engine

import (
	"path"
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
	"github.com/toolgate/toolgate/policy"
)

// resolvedPathRules applies the ask and deny rules of a tiered policy to
// every other form of a path tool's values: resolved (through a symlink or
// .., inside the workspace or not), cleaned (// and ./ gone), and a bare
// name under any key that is a link: read_file rootlink/etc/shadow meets a
// deny rule for /etc/shadow, and secrets//k one for **/secrets/**, as the
// call reads that file (docs/decisions.md#path-rules-see-every-form). Like a normalized shell command,
// a resolved form only adds an ask or deny: a deny always stands, an ask
// only over an allow that no approval override gave. It returns whether
// the decision changed.
func (e *Engine) resolvedPathRules(d *Decision, tool string, moved, movedUser []string, tr *tracer) bool {
	p := e.policy
	if !p.tiered || len(moved)+len(movedUser) == 0 || d.Level == policy.Deny {
		return false
	}
	// A form also names what a folder holds: naming the folder (grep -r
	// . secrets, cp -t .git/hooks x) reaches its files, which a rule
	// such as **/secrets/** names.
	moved = withContents(moved)
	movedUser = withContents(movedUser)
	all := moved
	if len(movedUser) > 0 {
		all = append(moved[:len(moved):len(moved)], movedUser...)
	}
	var bbuf, ubuf [8]*rule
	var out outcome
	found := false
	for _, set := range [...]struct {
		idx   *ruleIndex
		buf   []*rule
		base  string
		forms []string
	}{{&p.builtin, bbuf[:0], "tiered_policy:builtin:", moved}, {&p.user, ubuf[:0], "tiered_policy:rules:", all}} {
		if len(set.forms) == 0 {
			continue
		}
		// A shell tool's rules match its path words' forms as paths.
		nv := callValues{category: CategoryPath, paths: set.forms, strictOnly: true, pathForms: true}
		var hits []*rule
		for _, r := range set.idx.collect(tool, &nv, set.buf) {
			if r.level == policy.Ask || r.level == policy.Deny {
				hits = append(hits, r)
			}
		}
		if len(hits) == 0 {
			continue
		}
		o := finalize(hits, set.base)
		if !found || o.level > out.level {
			out, found = o, true
		}
	}
	if !found || out.level <= d.Level || out.level == policy.Ask && d.FromOverride {
		return false
	}
	d.Level, d.MatchedRule, d.FromOverride, d.Cause = out.level, out.rule, false, CausePathForm
	tr.add(Step{Name: "resolved_paths", Result: levelWords[out.level], Rule: out.rule, Hits: all,
		Detail: "a path value resolves (through a symlink or ..) to a place a stricter rule names", Decisive: true})
	return true
}

// addCleaned records the cleaned form of a path value when it differs (a
// relative value keeps its relative form: secrets//k is secrets/k), for
// resolvedPathRules.
func (c *extCollector) addCleaned(v string) {
	if v == "" || shell.HasUnknown(v) || !untidy(v) {
		return
	}
	c.moved = append(c.moved, path.Clean(slashes(v)))
}

// untidy reports whether a path is not in its clean form (path.Clean
// changes it: //, ./, .., a trailing /).
func untidy(v string) bool {
	v = slashes(v)
	// path.Clean changes only a path with //, a . or .. element (a dot
	// after a slash or at the start), a trailing slash, or none at all;
	// most paths have none of these and are passed at once.
	if v != "" && v[0] != '.' && (v == "/" || v[len(v)-1] != '/') && !strings.Contains(v, "//") && !strings.Contains(v, "/.") {
		return false
	}
	return path.Clean(v) != v
}

// addBareValues follows the bare names (no slash) among a path tool's
// string values under keys that are not path keys: any string of a path
// tool's arguments that names a link is a path, whatever its key
// (docs/decisions.md#path-rules-see-every-form).
func (c *extCollector) addBareValues(args map[string]any) {
	if c.e.opts.KindOf == nil || c.e.opts.ResolvePath == nil {
		return
	}
	eachKeyedString(args, func(k, t string) {
		if !isPathValue(k, t) && !shell.HasUnknown(t) {
			c.addBare(t)
			if c.namesFile(t) {
				c.add(t) // a file's name under any key is a path
			}
		}
	})
}

// namesFile reports whether a bare value (no slash) under a key that is not
// a path key names a file: it looks like one (a dotfile, ~) or one by that
// name exists in the workspace (Options.Glob of the plain name is an
// existence check).
func (c *extCollector) namesFile(v string) bool {
	if !isBareCandidate(v) && !strings.HasPrefix(v, "~") || strings.ContainsAny(v, " \t\n*?[") || v == "" {
		return false
	}
	if v[0] == '.' && len(v) > 1 && v != ".." || v[0] == '~' {
		return true
	}
	c.init()
	return c.e.opts.Glob != nil && c.ws != "" && strings.HasPrefix(c.ws, "/") && len(c.e.opts.Glob(c.ws+"/"+v)) > 0
}

// addGlob expands a filename glob word of a shell command against the
// files that exist under each base (Options.Glob), and judges each match
// as a path word: cat .en? reads .env, which path rules then see
// (docs/decisions.md#path-rules-see-every-form).
func (c *extCollector) addGlob(w string) {
	if !strings.ContainsAny(w, "*?[") || shell.HasUnknown(w) || w == "" || w[0] == '-' {
		return
	}
	if i := strings.IndexByte(w, '='); i > 0 && w[0] != '/' && w[0] != '.' {
		w = w[i+1:] // an option or assignment value: of=secrets/*
	}
	c.init()
	for i := 0; i < c.nbases; i++ {
		base := c.bases[i]
		pattern := w
		switch {
		case strings.HasPrefix(w, "~/"):
			pattern = shell.ExpandHome(w, c.e.home(c.req))
		case !strings.HasPrefix(w, "/") && strings.HasPrefix(base, "/"):
			pattern = base + "/" + w
		case !strings.HasPrefix(w, "/"):
			continue
		}
		if !c.onHost(base) {
			// Not expandable here: rules meet the glob itself.
			c.globs = append(c.globs, pattern)
			continue
		}
		for _, m := range c.e.opts.Glob(pattern) {
			if !c.count() {
				return
			}
			c.judge(m)
			c.moved = append(c.moved, m)
		}
	}
}

// onHost reports whether a directory exists on this host, so that a glob
// under it can be expanded here.
func (c *extCollector) onHost(dir string) bool {
	return c.e.opts.Glob != nil && strings.HasPrefix(dir, "/") && !strings.ContainsAny(dir, "*?[") && len(c.e.opts.Glob(dir)) > 0
}

// globRules applies the ask and deny glob rules of a shell tool to the
// filename globs of a command that could not be expanded on this host: a
// rule hits when some path could match both (glob_meet.go). Like the
// other forms, it only adds an ask or a deny.
func (e *Engine) globRules(d *Decision, tool string, globs []string, tr *tracer) {
	p := e.policy
	if !p.tiered || len(globs) == 0 || d.Level == policy.Deny {
		return
	}
	var out outcome
	found := false
	for _, set := range [...]struct {
		idx  *ruleIndex
		base string
	}{{&p.builtin, "tiered_policy:builtin:"}, {&p.user, "tiered_policy:rules:"}} {
		rules := set.idx.byTool[tool]
		if rules == nil {
			continue
		}
		var hits []*rule
		for _, r := range rules.scan {
			if r.level < policy.Ask || r.m.glob == nil {
				continue
			}
			for _, g := range globs {
				if r.m.glob.MayMeet(g) {
					hits = append(hits, r)
					break
				}
			}
		}
		if len(hits) == 0 {
			continue
		}
		if o := finalize(hits, set.base); !found || o.level > out.level {
			out, found = o, true
		}
	}
	if !found || out.level <= d.Level || out.level == policy.Ask && d.FromOverride {
		return
	}
	d.Level, d.MatchedRule, d.FromOverride, d.Cause = out.level, out.rule, false, CausePathForm
	tr.add(Step{Name: "unexpanded_globs", Result: levelWords[out.level], Rule: out.rule, Hits: globs,
		Detail: "a filename glob that cannot be expanded here could name a file a stricter rule names", Decisive: true})
}

// plainInside reports whether a relative word resolved against base to
// base/word itself, inside the workspace: no link, no .., nothing but the
// absolute spelling of what is written.
func (c *extCollector) plainInside(word, abs, base string) bool {
	if word == "" || word[0] == '/' || c.ws == "" || !under(abs, c.ws) || untidy(word) {
		return false
	}
	return len(abs) == len(base)+1+len(word) && strings.HasPrefix(abs, base) && abs[len(base)] == '/' && strings.HasSuffix(abs, word)
}

// withContents is forms with each form's "contents" reading (form + "/")
// added.
func withContents(forms []string) []string {
	if len(forms) == 0 {
		return forms
	}
	out := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		out = append(out, f)
		if !strings.HasSuffix(f, "/") {
			out = append(out, f+"/")
		}
	}
	return out
}

// addRevisionPath records, for path rules only, the path after the colon of
// a word such as HEAD:secrets/api.key (git show prints that file) or
// host:/etc/cron.d/job (scp writes there): not judged as a local path
// outside the workspace, since it may name another machine's file.
func (c *extCollector) addRevisionPath(w string) {
	i := strings.LastIndexByte(w, ':')
	if i <= 0 || i == len(w)-1 || w[0] == '-' || shell.IsNetworkURL(w) || shell.HasUnknown(w) || strings.Contains(w, "://") {
		return
	}
	p := strings.TrimPrefix(w[i+1:], "./")
	if p == "" || strings.ContainsAny(p, " \t\n") || len(w) >= 2 && w[1] == ':' {
		return // a drive letter, not a revision
	}
	c.init()
	if strings.HasPrefix(p, "/") {
		c.moved = append(c.moved, path.Clean(p))
		return
	}
	if c.ws != "" && strings.HasPrefix(c.ws, "/") {
		c.moved = append(c.moved, path.Clean(c.ws+"/"+p))
	}
}
