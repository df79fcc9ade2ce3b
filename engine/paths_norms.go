package engine

import (
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
)

// resolvedWord is one path word resolved against one base.
type resolvedWord struct {
	w, base, abs string
	known        bool
}

// resolveMemo remembers the first few resolutions of one call, so that the
// resolved normalized commands (made before the rules run) and the
// external check (after them) look each path up once. It is made only for
// a shell call with a path word or a working directory.
type resolveMemo struct {
	n     int
	items [6]resolvedWord
}

// resolve is Engine.resolveWord through the memo; a nil memo resolves
// directly.
func (m *resolveMemo) resolve(e *Engine, w, base string) (string, bool) {
	if m == nil {
		return e.resolveWord(w, base)
	}
	for i := 0; i < m.n; i++ {
		if it := &m.items[i]; it.w == w && it.base == base {
			return it.abs, it.known
		}
	}
	abs, known := e.resolveWord(w, base)
	if m.n < len(m.items) {
		m.items[m.n] = resolvedWord{w: w, base: base, abs: abs, known: known}
		m.n++
	}
	return abs, known
}

// addResolvedNorms adds to the normalized commands of a shell call, for
// each simple command with a word that names a place outside the workspace
// other than its text says (a relative word under an outside workdir, ..,
// a link), the command with such words replaced by their resolved paths:
// `rm -rf alice` in workdir /home is also matched as `rm -rf /home/alice`,
// so that deny and ask rules that name the absolute place apply (a normalized
// form only adds ask or deny hits, never an allow). Words that resolve
// inside the workspace are left as written, so no rule sees a workspace
// path it was not written for.
func (e *Engine) addResolvedNorms(v *callValues) {
	if v.category != CategoryShell {
		return
	}
	c := &v.ctx
	sh := c.sh
	workdir := c.workdir
	switch {
	case sh == nil && !workdir && strings.IndexByte(v.command, '/') < 0 && !strings.Contains(v.command, ".."):
		return // a plain command with no path word and no working directory
	case sh != nil && !workdir && len(sh.Paths) == 0:
		return
	}
	c.memo = new(resolveMemo)
	col := extCollector{e: e, req: c.req, ext: &e.policy.ext, shell: true, memo: c.memo}
	col.init()
	outsideBase := false
	for i := 0; i < col.nbases; i++ {
		if b := col.bases[i]; b != "" && (col.ws == "" || !under(b, col.ws)) {
			outsideBase = true
		}
	}
	if sh != nil {
		for _, argv := range sh.Argv {
			if norm, ok := e.resolvedArgv(argv, &col, outsideBase); ok {
				v.norms = append(v.norms[:len(v.norms):len(v.norms)], norm)
			}
		}
		return
	}
	var argv [16]string
	n := 0
	eachPlainWord(v.command, func(w string) {
		if n < len(argv) {
			argv[n] = w
			n++
		}
	})
	if norm, ok := e.resolvedArgv(argv[:n], &col, outsideBase); ok {
		v.norms = append(v.norms[:len(v.norms):len(v.norms)], norm)
	}
}

// resolvedArgv returns argv with its outside words resolved, joined by
// single spaces, when at least one word changed.
func (e *Engine) resolvedArgv(argv []string, col *extCollector, outsideBase bool) (string, bool) {
	changed := -1
	var out []string
	for i := 1; i < len(argv); i++ {
		abs, ok := e.outsideForm(argv[i], col, outsideBase)
		if !ok {
			continue
		}
		if changed < 0 {
			out = append([]string(nil), argv...)
			changed = i
		}
		out[i] = abs
	}
	if changed < 0 {
		return "", false
	}
	return strings.Join(out, " "), true
}

// outsideForm returns the resolved path of a word when it lies outside the
// workspace and differs from the word as written.
func (e *Engine) outsideForm(w string, col *extCollector, outsideBase bool) (string, bool) {
	if w == "" || w[0] == '-' || shell.HasUnknown(w) {
		return "", false
	}
	p, isPath := shell.PathWord(w, e.home(col.req))
	if !isPath {
		if !outsideBase || !isBareCandidate(w) {
			return "", false
		}
		p = w
	}
	for i := 0; i < col.nbases; i++ {
		abs, known := col.memo.resolve(e, p, col.bases[i])
		if known && abs != "" && abs != w && (col.ws == "" || !under(abs, col.ws)) {
			return abs, true
		}
	}
	return "", false
}
